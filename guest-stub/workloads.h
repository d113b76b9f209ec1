/*
 * workloads.h -- what the guest does once it is up.  Each returns the
 * guest's exit status.
 */
#ifndef WORKLOADS_H
#define WORKLOADS_H

#include "cmdline.h"
#include "lguest_kvm_abi.h"

extern struct lkvm_guest_report guest_report;

int workload_raw(const struct params *p);      /* transmit --bytes of frames */
int workload_tcp(const struct params *p);      /* send --bytes over TCP to lkvm.peer */
int workload_echo(void);                       /* console input back out */
int workload_fault(const struct params *p);    /* deliberate faults, hostile rings among them */
int workload_hostile_ring(const struct params *p); /* --fault hostile-* but -trace-*: a ring to refuse */

#endif
