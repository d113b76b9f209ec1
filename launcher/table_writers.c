/*
 * table_writers.c -- `lguest-kvm table --csv/--json/--plot`: the finished
 * rows of the sweep (table_sweep.h) written out.  The sweep in table.c
 * measures and prints the text table; here the same medians, spreads and
 * raw samples become a CSV row per model and row, one JSON object (with
 * every sample, the host's hypervisor and the loopback ceiling), and a
 * gnuplot drawing: seconds and notifies against the static threshold, or
 * (cost experiment) seconds, notifies and timeouts against the exit cost.
 */
#include "table_sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "host_kind.h"
#include "stats.h"

const char *const table_metric_key[M_COUNT] = {
	"seconds", "gbit_per_second", "timeouts", "notifies", "threshold_final", "ring_full", "indirect_share",
};

int table_write_csv(const struct table *t)
{
	FILE *f = fopen(t->csv, "w");

	if (!f)
		return diag_fail("--csv %s: %s", t->csv, strerror(errno));
	fprintf(f, "experiment,model,row,options,samples");
	for (unsigned m = 0; m < M_COUNT; m++)
		fprintf(f, ",%s_median,%s_min,%s_max", table_metric_key[m], table_metric_key[m], table_metric_key[m]);
	fprintf(f, ",failed\n");
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];

			fprintf(f, "%s,%s,%s,", t->experiment, t->models[mi], r->label);
			for (unsigned k = 0; k < r->nargs; k++)
				fprintf(f, "%s%s", k ? " " : "", r->args[k]);
			fprintf(f, ",%u", r->n);
			for (unsigned m = 0; m < M_COUNT; m++)
				if (r->failed[0])
					fprintf(f, ",,,");
				else
					fprintf(f, ",%.6g,%.6g,%.6g", r->median[m], r->min[m], r->max[m]);
			fprintf(f, ",\"%s\"\n", r->failed);
		}
	return fclose(f) ? diag_fail("--csv %s: write failed", t->csv) : 0;
}

int table_write_json(const struct table *t)
{
	FILE *f = fopen(t->json, "w");

	if (!f)
		return diag_fail("--json %s: %s", t->json, strerror(errno));
	fprintf(f, "{\n  \"experiment\": \"%s\",\n  \"repeat\": %u,\n  \"host_hypervisor\": ", t->experiment, t->repeat);
	json_write_string(f, host_hypervisor());
	fprintf(f, ",\n  \"emulated\": %s,\n  \"options\": [", host_is_emulated() ? "true" : "false");
	for (unsigned i = 0; i < t->npass; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_write_string(f, t->pass[i]);
	}
	fprintf(f, "],\n  \"rows\": [");
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];

			fprintf(f, "%s\n    {\"model\": \"%s\", \"row\": ", mi || i ? "," : "", t->models[mi]);
			json_write_string(f, r->label);
			fprintf(f, ", \"options\": [");
			for (unsigned k = 0; k < r->nargs; k++) {
				fprintf(f, "%s", k ? ", " : "");
				json_write_string(f, r->args[k]);
			}
			fprintf(f, "], \"ok\": %s, \"failed\": ", r->failed[0] ? "false" : "true");
			json_write_string(f, r->failed);
			fprintf(f, ",\n     \"samples\": [");
			for (unsigned s = 0; s < r->n; s++) {
				fprintf(f, "%s{", s ? ", " : "");
				for (unsigned m = 0; m < M_COUNT; m++)
					fprintf(f, "%s\"%s\": %.9g", m ? ", " : "", table_metric_key[m], r->v[s][m]);
				fprintf(f, "}");
			}
			fprintf(f, "]");
			if (!r->failed[0]) {
				fprintf(f, ",\n     \"median\": {");
				for (unsigned m = 0; m < M_COUNT; m++)
					fprintf(f, "%s\"%s\": %.9g", m ? ", " : "", table_metric_key[m], r->median[m]);
				fprintf(f, "},\n     \"spread_pct\": {");
				for (unsigned m = 0; m < M_COUNT; m++)
					fprintf(f, "%s\"%s\": %.3f", m ? ", " : "", table_metric_key[m], spread_pct(r, m));
				fprintf(f, "}");
			}
			fprintf(f, "}");
		}
	fprintf(f, "\n  ]");
	if (t->tcp) {
		fprintf(f, ",\n  \"net\": \"%s\",\n  \"host_loopback_bytes\": %llu,\n  \"host_loopback_seconds\": [",
			t->tcp_tap ? "tap" : "user", (unsigned long long)t->bytes);
		for (unsigned k = 0; k < t->nloopback; k++)
			fprintf(f, "%s%.6f", k ? ", " : "", t->loopback[k]);
		fprintf(f, "]");
	}
	fprintf(f, "\n}\n");
	return fclose(f) ? diag_fail("--json %s: write failed", t->json) : 0;
}

static bool any_row_measured(const struct table *t)
{
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++)
			if (t->rows[mi][i].n && !t->rows[mi][i].failed[0])
				return true;
	return false;
}

/* Notify and layout experiments: seconds (linear) and notifies (log)
 * against the static threshold, one series per model (and, for the layout
 * experiment, per layout); rows without a threshold are horizontal lines. */
static const char *const plot_layouts[2] = { "split", "packed" };

static unsigned notify_series(const struct table *t)
{
	return t->nmodels * (strcmp(t->experiment, "layout") ? 1 : 2);
}

/* Row i of series s, or NULL if it belongs to another layout. */
static const struct row *series_row(const struct table *t, unsigned s, unsigned i)
{
	unsigned per_model = notify_series(t) / t->nmodels;
	const struct row *r = &t->rows[s / per_model][i];

	return per_model == 1 || !strcmp(r->layout, plot_layouts[s % 2]) ? r : NULL;
}

static void series_title(const struct table *t, unsigned s, char *buf, size_t size)
{
	unsigned per_model = notify_series(t) / t->nmodels;

	snprintf(buf, size, "%s%s%s", t->models[s / per_model], per_model == 1 ? "" : "/",
		 per_model == 1 ? "" : plot_layouts[s % 2]);
}

static void notify_plot_data(FILE *d, const struct table *t)
{
	for (unsigned s = 0; s < notify_series(t); s++) {
		char title[40];

		series_title(t, s, title, sizeof(title));
		fprintf(d, "# %s\n", title);
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = series_row(t, s, i);

			if (r && !r->failed[0] && !strncmp(r->policy, "static:", 7))
				fprintf(d, "%s %.6f %.0f\n", r->policy + 7, r->median[M_SECONDS], r->median[M_NOTIFIES]);
		}
		fprintf(d, "\n\n");
	}
}

/* A row drawn as a horizontal line in this panel. */
static bool flat_row(const struct row *r, unsigned panel)
{
	return r && !r->failed[0] && strncmp(r->policy, "static:", 7) &&
	       !(panel && r->median[M_NOTIFIES] <= 0);
}

static void notify_plot_script(FILE *g, const struct table *t, const char *data)
{
	static const char *const colour[4] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd" };
	unsigned ns = notify_series(t);

	fprintf(g, "set multiplot layout 2,1 title 'lguest-kvm table: notify threshold sweep%s'\n"
		   "set key outside right\nset grid\nset xlabel 'static threshold (buffers)'\n",
		!strcmp(t->experiment, "layout") ? ", split and packed rings" : "");
	for (unsigned panel = 0; panel < 2; panel++) {
		fprintf(g, panel ? "set ylabel 'notifies'\nset logscale y\n" : "set ylabel 'seconds'\nunset logscale y\n");
		for (unsigned s = 0; s < ns; s++)
			for (unsigned i = 0; i < t->nrows; i++) {
				const struct row *r = series_row(t, s, i);

				if (flat_row(r, panel))
					fprintf(g, "f%u_%u(x) = %.6g\n", s, i, r->median[panel ? M_NOTIFIES : M_SECONDS]);
			}
		fprintf(g, "plot ");
		for (unsigned s = 0; s < ns; s++) {
			char title[40];

			series_title(t, s, title, sizeof(title));
			fprintf(g, "%s'%s' index %u using 1:%u with linespoints lw 2 lc rgb '%s' title '%s: static'",
				s ? ", " : "", data, s, panel ? 3 : 2, colour[s % 4], title);
			for (unsigned i = 0; i < t->nrows; i++) {
				const struct row *r = series_row(t, s, i);

				if (flat_row(r, panel))
					fprintf(g, ", f%u_%u(x) with lines dt %u lc rgb '%s' title '%s: %s'", s, i,
						2 + i % 3, colour[s % 4], title, r->label);
			}
		}
		fprintf(g, "\n");
	}
	fprintf(g, "unset multiplot\n");
}

/* Cost experiment: seconds, notifies and timeouts against the exit cost,
 * one series per policy and pace (rows come policy-major, then pace, then
 * cost: add_cost_rows).  The costs are drawn evenly spaced, labelled. */
static bool same_series(const struct row *a, const struct row *b)
{
	return a->pace_us == b->pace_us && !strcmp(a->policy, b->policy);
}

static void cost_plot_data(FILE *d, const struct table *t)
{
	for (unsigned i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[0][i];
		bool first = !i || !same_series(r, &t->rows[0][i - 1]);

		if (first && i)
			fprintf(d, "\n\n");
		if (first)
			fprintf(d, "# %s, pace %u us\n", r->label, r->pace_us);
		if (r->failed[0])
			fprintf(d, "\"%u\" NaN NaN NaN\n", r->exit_cost_us);
		else
			fprintf(d, "\"%u\" %.6f %.0f %.0f\n", r->exit_cost_us, r->median[M_SECONDS],
				r->median[M_NOTIFIES], r->median[M_TIMEOUTS]);
	}
	fprintf(d, "\n\n");
}

static void cost_plot_script(FILE *g, const struct table *t, const char *data)
{
	static const char *const ylabel[3] = { "seconds", "notifies", "timeouts" };
	unsigned series = 0;

	for (unsigned i = 0; i < t->nrows; i++)
		series += !i || !same_series(&t->rows[0][i], &t->rows[0][i - 1]);
	fprintf(g, "set multiplot layout 3,1 title 'lguest-kvm table --experiment cost (thread model, no VM)'\n"
		   "set key outside right\nset grid\nset xlabel 'exit cost (us)'\nset datafile missing 'NaN'\n");
	for (unsigned panel = 0; panel < 3; panel++) {
		fprintf(g, "set ylabel '%s'\n%s\nplot ", ylabel[panel], panel ? "set logscale y" : "unset logscale y");
		for (unsigned s = 0, i = 0; s < series; s++) {
			const struct row *r = &t->rows[0][i];

			/* dashed: the 2008-paced guest */
			fprintf(g, "%s'%s' index %u using 0:%u:xtic(1) with linespoints lw 2 lc %u dt %u "
				   "title '%s, pace %u us'", s ? ", " : "", data, s, panel + 2, 1 + s / 2,
				r->pace_us ? 2 : 1, r->label, r->pace_us);
			while (i < t->nrows && same_series(&t->rows[0][i], r))
				i++;
		}
		fprintf(g, "\n");
	}
	fprintf(g, "unset multiplot\n");
}

int table_write_plot(const struct table *t)
{
	bool cost = !strcmp(t->experiment, "cost");
	const char *ext = strrchr(t->plot, '.');   /* checked by parse_table_options */
	char data[] = "/tmp/lkvm-plot-XXXXXX";
	int fd, rc;
	FILE *d, *g;

	/* An empty plot would only make gnuplot complain about the data. */
	if (!any_row_measured(t)) {
		fprintf(stderr, "lguest-kvm table: --plot %s: no row has data, so no plot was drawn\n", t->plot);
		return 0;
	}
	fd = mkstemp(data);
	if (fd < 0)
		return diag_fail("--plot: cannot create a temporary data file: %s", strerror(errno));
	if (!(d = fdopen(fd, "w"))) {
		close(fd);
		unlink(data);
		return diag_fail("--plot: cannot write a temporary data file");
	}
	(cost ? cost_plot_data : notify_plot_data)(d, t);
	fclose(d);
	g = popen("gnuplot 2>&1", "w");
	if (!g) {
		unlink(data);
		return diag_fail("--plot: cannot start a shell for gnuplot: %s", strerror(errno));
	}
	fprintf(g, "set terminal %s size 900,%u font 'sans,11'\nset output '%s'\n",
		!strcmp(ext, ".svg") ? "svg dynamic" : "pngcairo", cost ? 1000 : 700, t->plot);
	(cost ? cost_plot_script : notify_plot_script)(g, t, data);
	rc = pclose(g);
	unlink(data);
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 127)   /* the shell's "command not found" */
		return diag_fail("--plot %s: gnuplot is not installed -- apt-get install gnuplot-nox", t->plot);
	if (rc != 0)
		return diag_fail("--plot %s: gnuplot failed (exit %d); its own messages are above", t->plot,
				 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
	return 0;
}
