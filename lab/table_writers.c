/*
 * table_writers.c -- `lguest-kvm table --csv/--json/--plot`: the finished
 * rows of the sweep (table_sweep.h) written out.  The sweep in table.c
 * measures and prints the text table; here the same medians, spreads and
 * raw samples become a CSV row per model and row, one JSON object (with
 * every sample, the host's hypervisor and the loopback ceiling), and a
 * gnuplot drawing: seconds and notifies against the static threshold, or
 * (cost experiment) seconds, notifies and timeouts against the exit cost,
 * or (indirect cost sweep) Gbit/s against the price of an indirect table,
 * with where threshold overtakes always -- computed here from the medians
 * (table_crossovers) for the text table, the JSON and the plot alike.
 */
#include "table_sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "gnuplot.h"
#include "host_kind.h"
#include "stats.h"

const char *const table_metric_key[M_COUNT] = {
	"seconds", "gbit_per_second", "timeouts", "notifies", "threshold_final", "ring_full", "indirect_share",
	"indirect_build_ns_per_table", "pop_ns_per_chain_direct", "pop_ns_per_chain_indirect",
	"device_cpu_seconds", "device_wakeups", "interrupts", "guest_waits_halted", "poll_seconds", "frames",
	"payload_bytes",
};

/* ---- the indirect cost sweep's crossover ---- */

static const struct row *sweep_row(const struct table *t, unsigned mi, const char *mode, unsigned ring, unsigned cost)
{
	for (unsigned i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[mi][i];

		if (r->mode && !strcmp(r->mode, mode) && r->ring == ring && r->indirect_cost_ns == cost)
			return r;
	}
	return NULL;
}

static bool measured(const struct row *r)
{
	return r && r->n && !r->failed[0];
}

static int cmp_ratio(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median over rounds of h's Gbit/s over a's in the same round; 0 if no
 * round has both. */
static double paired_ratio(const struct row *h, const struct row *a)
{
	double r[MAX_REPEAT];
	unsigned n = 0;

	for (unsigned k = 0; k < h->n && k < a->n; k++)
		if (a->v[k][M_GBPS] > 0)
			r[n++] = h->v[k][M_GBPS] / a->v[k][M_GBPS];
	if (!n)
		return 0;
	qsort(r, n, sizeof(r[0]), cmp_ratio);
	return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

unsigned table_crossovers(const struct table *t, struct crossover *out)
{
	unsigned n = 0;

	if (strcmp(t->experiment, "indirect") || !t->nicosts)
		return 0;
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *thr = &t->rows[mi][i];
			struct crossover *c = &out[n];

			/* one crossover per threshold row of the first cost */
			if (strncmp(thr->mode, "threshold", 9) || thr->indirect_cost_ns != t->icosts[0] ||
			    !sweep_row(t, mi, "always", thr->ring, t->icosts[0]) || n == MAX_CROSSOVERS)
				continue;
			*c = (struct crossover){ .model = mi, .ring = thr->ring, .threshold = thr->mode };
			for (unsigned k = 0; k < t->nicosts; k++) {
				const struct row *a = sweep_row(t, mi, "always", thr->ring, t->icosts[k]);
				const struct row *h = sweep_row(t, mi, thr->mode, thr->ring, t->icosts[k]);

				if (!measured(a) || !measured(h))
					continue;
				c->measured = true;
				c->up_to_ns = t->icosts[k];
				c->ratio[k] = paired_ratio(h, a);
				if (!c->paired_found && c->ratio[k] > 1) {
					c->paired_found = true;
					c->paired_cost_ns = t->icosts[k];
				}
				if (!c->found && h->median[M_GBPS] > a->median[M_GBPS]) {
					c->found = true;
					c->cost_ns = t->icosts[k];
					c->threshold_gbps = h->median[M_GBPS];
					c->always_gbps = a->median[M_GBPS];
					c->threshold_min = h->min[M_GBPS];
					c->threshold_max = h->max[M_GBPS];
					c->always_min = a->min[M_GBPS];
					c->always_max = a->max[M_GBPS];
				}
			}
			n++;
		}
	return n;
}

void crossover_describe_paired(const struct table *t, const struct crossover *c, char *buf, size_t size)
{
	int n = snprintf(buf, size, "ring %u, paired by round, %s/always:", c->ring, c->threshold);

	for (unsigned k = 0; k < t->nicosts && n > 0 && (size_t)n < size; k++)
		n += c->ratio[k] > 0 ? snprintf(buf + n, size - (size_t)n, " %u ns %.2f", t->icosts[k], c->ratio[k])
				     : snprintf(buf + n, size - (size_t)n, " %u ns -", t->icosts[k]);
	if (n > 0 && (size_t)n < size) {
		if (c->paired_found)
			snprintf(buf + n, size - (size_t)n, "; above 1 from %u ns", c->paired_cost_ns);
		else
			snprintf(buf + n, size - (size_t)n, "; never above 1");
	}
}

void crossover_describe(const struct crossover *c, char *buf, size_t size)
{
	if (c->found)
		snprintf(buf, size, "ring %u: %s overtakes always at %u ns (%.2f [%.2f-%.2f] vs %.2f [%.2f-%.2f] Gbit/s%s)",
			 c->ring, c->threshold, c->cost_ns, c->threshold_gbps, c->threshold_min, c->threshold_max,
			 c->always_gbps, c->always_min, c->always_max,
			 c->threshold_min <= c->always_max ? "; the ranges overlap" : "");
	else if (c->measured)
		snprintf(buf, size, "ring %u: no crossover up to %u ns (%s never above always)", c->ring, c->up_to_ns,
			 c->threshold);
	else
		snprintf(buf, size, "ring %u: not measured (%s or always failed at every cost)", c->ring, c->threshold);
}

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
			if (t->nicosts) {
				fprintf(f, ", \"indirect\": ");
				json_write_string(f, r->mode);
				fprintf(f, ", \"ring\": %u, \"indirect_cost_ns\": %u", r->ring, r->indirect_cost_ns);
			}
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
	if (t->nicosts) {
		struct crossover cx[MAX_CROSSOVERS];
		unsigned ncx = table_crossovers(t, cx);

		fprintf(f, ",\n  \"indirect_costs_ns\": [");
		for (unsigned c = 0; c < t->nicosts; c++)
			fprintf(f, "%s%u", c ? ", " : "", t->icosts[c]);
		fprintf(f, "],\n  \"crossover\": [");
		for (unsigned k = 0; k < ncx; k++) {
			fprintf(f, "%s\n    {\"model\": \"%s\", \"ring\": %u, \"threshold\": ", k ? "," : "",
				t->models[cx[k].model], cx[k].ring);
			json_write_string(f, cx[k].threshold);
			if (cx[k].found)
				fprintf(f, ", \"cost_ns\": %u, \"threshold_gbit_per_second\": %.6g, "
					   "\"always_gbit_per_second\": %.6g, \"ranges_overlap\": %s", cx[k].cost_ns,
					cx[k].threshold_gbps, cx[k].always_gbps,
					cx[k].threshold_min <= cx[k].always_max ? "true" : "false");
			else
				fprintf(f, ", \"cost_ns\": null, \"up_to_ns\": %u, \"measured\": %s", cx[k].up_to_ns,
					cx[k].measured ? "true" : "false");
			fprintf(f, ",\n     \"paired_ratio_median\": [");
			for (unsigned c = 0; c < t->nicosts; c++)
				fprintf(f, "%s%.4f", c ? ", " : "", cx[k].ratio[c]);
			if (cx[k].paired_found)
				fprintf(f, "], \"paired_cost_ns\": %u}", cx[k].paired_cost_ns);
			else
				fprintf(f, "], \"paired_cost_ns\": null}");
		}
		fprintf(f, "%s]", ncx ? "\n  " : "");
	}
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

/* Indirect cost sweep: Gbit/s (median, min-max bars) against the price of
 * a table, a line per policy and ring (rows come policy-major, then ring,
 * then cost: add_indirect_row), a panel per model; each crossover is a
 * vertical line at its cost. */
static bool new_sweep_series(const struct table *t, unsigned i)
{
	return !i || t->rows[0][i].ring != t->rows[0][i - 1].ring || strcmp(t->rows[0][i].mode, t->rows[0][i - 1].mode);
}

static void sweep_plot_data(FILE *d, const struct table *t)
{
	struct crossover cx[MAX_CROSSOVERS];
	unsigned ncx = table_crossovers(t, cx);

	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];

			if (new_sweep_series(t, i))
				fprintf(d, "%s# %s: %s/%u\n", mi || i ? "\n\n" : "", t->models[mi], r->mode, r->ring);
			if (r->failed[0] || !r->n)
				fprintf(d, "%u NaN NaN NaN\n", r->indirect_cost_ns);
			else
				fprintf(d, "%u %.6f %.6f %.6f\n", r->indirect_cost_ns, r->median[M_GBPS], r->min[M_GBPS],
					r->max[M_GBPS]);
		}
	/* then the paired ratios, one series per crossover, after the rows */
	for (unsigned k = 0; k < ncx; k++) {
		fprintf(d, "\n\n# %s: %s/always, ring %u, paired by round\n", t->models[cx[k].model], cx[k].threshold,
			cx[k].ring);
		for (unsigned c = 0; c < t->nicosts; c++)
			if (cx[k].ratio[c] > 0)
				fprintf(d, "%u %.6f\n", t->icosts[c], cx[k].ratio[c]);
			else
				fprintf(d, "%u NaN\n", t->icosts[c]);
	}
	fprintf(d, "\n\n");
}

static const char *sweep_colour(const char *mode)
{
	return !strcmp(mode, "never") ? "#7f7f7f" : !strcmp(mode, "always") ? "#d62728"
	     : !strcmp(mode, "threshold") ? "#2ca02c" : "#1f77b4";
}

static void sweep_plot_script(FILE *g, const struct table *t, const char *data)
{
	struct crossover cx[MAX_CROSSOVERS];
	unsigned ncx = table_crossovers(t, cx), series = 0;

	unsigned nseries = 0;

	for (unsigned i = 0; i < t->nrows; i++)
		nseries += new_sweep_series(t, i);
	fprintf(g, "set multiplot layout %u,1 title 'lguest-kvm table --experiment indirect: the price of an indirect "
		   "table'\nset key outside right\nset grid\nset datafile missing 'NaN'\n"
		   "set xlabel 'guest cost of building one indirect table (--indirect-cost-ns, ns)'\n"
		   "set xtics (", 2 * t->nmodels);
	for (unsigned c = 0; c < t->nicosts; c++)
		fprintf(g, "%s%u", c ? ", " : "", t->icosts[c]);
	fprintf(g, ")\nset offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05\n");
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		/* the crossovers under the model's name: vertical lines where found */
		fprintf(g, "unset arrow\nset ylabel 'Gbit/s (median; bars min-max)'\nset title \"model %s", t->models[mi]);
		for (unsigned k = 0; k < ncx; k++) {
			char line[200];

			if (cx[k].model != mi)
				continue;
			crossover_describe(&cx[k], line, sizeof(line));
			fprintf(g, "\\n%s", line);
		}
		fprintf(g, "\" font ',10'\n");
		for (unsigned k = 0; k < ncx; k++)
			if (cx[k].model == mi && cx[k].found)
				fprintf(g, "set arrow from %u, graph 0 to %u, graph 1 nohead dt %u lw 2 lc rgb '#2ca02c'\n",
					cx[k].cost_ns, cx[k].cost_ns, cx[k].ring == 128 ? 1 : 2);
		fprintf(g, "plot ");
		for (unsigned i = 0, first = 1; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];

			if (!new_sweep_series(t, i))
				continue;
			fprintf(g, "%s'%s' index %u using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '%s' dt %u title '%s/%u'",
				first ? "" : ", ", data, series++, sweep_colour(r->mode), r->ring == 128 ? 1 : 2, r->mode,
				r->ring);
			first = 0;
		}
		fprintf(g, "\n");
		/* below it: threshold over always, paired by round; above 1,
		 * threshold is ahead */
		fprintf(g, "set title 'model %s: threshold / always, Gbit/s in the same round (median over rounds)'\n"
			   "set ylabel 'threshold / always'\nplot 1 with lines lc rgb '#000000' dt 3 notitle",
			t->models[mi]);
		for (unsigned k = 0; k < ncx; k++)
			if (cx[k].model == mi)
				fprintf(g, ", '%s' index %u using 1:2 with linespoints lw 2 pt 7 lc rgb '#2ca02c' dt %u "
					   "title '%s/always, ring %u'", data, nseries * t->nmodels + k, cx[k].ring == 128 ? 1 : 2,
					cx[k].threshold, cx[k].ring);
		fprintf(g, "\n");
	}
	fprintf(g, "unset multiplot\n");
}

/* The three drawings, chosen by the experiment, for gnuplot_draw. */
static bool sweep_plot(const struct table *t)
{
	return !strcmp(t->experiment, "indirect") && t->nicosts;
}

static void table_plot_data(FILE *d, const void *ctx)
{
	const struct table *t = ctx;

	(sweep_plot(t) ? sweep_plot_data : !strcmp(t->experiment, "cost") ? cost_plot_data : notify_plot_data)(d, t);
}

static void table_plot_script(FILE *g, const void *ctx, const char *data)
{
	const struct table *t = ctx;

	(sweep_plot(t) ? sweep_plot_script : !strcmp(t->experiment, "cost") ? cost_plot_script
									   : notify_plot_script)(g, t, data);
}

int table_write_plot(const struct table *t)
{
	unsigned height = !strcmp(t->experiment, "cost") ? 1000 : sweep_plot(t) ? 800 * t->nmodels + 100 : 700;

	/* An empty plot would only make gnuplot complain about the data. */
	if (!any_row_measured(t)) {
		fprintf(stderr, "lguest-kvm table: --plot %s: no row has data, so no plot was drawn\n", t->plot);
		return 0;
	}
	return gnuplot_draw(t->plot, 900, height, table_plot_data, table_plot_script, t);
}
