/*
 * table.h -- `lguest-kvm table`: run the notification sweep and print the
 * 2008 table next to the modern rows.
 */
#ifndef TABLE_H
#define TABLE_H

int table_main(int argc, char **argv);

#endif
