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
#include "json_writer.h"

const char *const table_metric_key[M_COUNT] = {
	"seconds", "gbit_per_second", "timeouts", "notifies", "threshold_final", "ring_full", "indirect_share",
	"indirect_build_ns_per_table", "pop_ns_per_chain_direct", "pop_ns_per_chain_indirect",
	"device_cpu_seconds", "device_wakeups", "interrupts", "guest_waits_halted", "poll_seconds", "frames",
	"payload_bytes", "event_idx_negotiated",
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
	fprintf(f, "experiment,vm,model,row,options,samples");
	for (unsigned m = 0; m < M_COUNT; m++)
		fprintf(f, ",%s_median,%s_min,%s_max", table_metric_key[m], table_metric_key[m], table_metric_key[m]);
	fprintf(f, ",failed\n");
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];

			fprintf(f, "%s,%s,%s,%s,", t->experiment, t->vm, t->models[mi], r->label);
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

double table_per_gib(const struct table *t)
{
	return t->bytes ? (double)(1ull << 30) / t->bytes : 1;
}

void table_shape(const struct table *t, unsigned mi, struct shape_verdict *v)
{
	struct shape_row rows[MAX_ROWS];
	size_t n = 0;
	double g = table_per_gib(t);

	for (unsigned i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[mi][i];

		if (r->failed[0] || !r->n || !r->policy)
			continue;
		rows[n++] = (struct shape_row){ r->policy, r->median[M_SECONDS] * g, r->min[M_SECONDS] * g,
						r->max[M_SECONDS] * g, r->median[M_TIMEOUTS] * g,
						r->median[M_NOTIFIES] * g };
	}
	shape_judge(rows, n, v);
}

/* The notify table's shape against 2008's, one object per model. */
static void json_verdicts(struct json_writer *w, const struct table *t)
{
	json_break(w, 2);
	json_double(w, "per_gib", "%.9g", table_per_gib(t));
	json_break(w, 2);
	json_begin_array(w, "verdict");
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		struct shape_verdict v;

		table_shape(t, mi, &v);
		json_break(w, 4);
		json_begin_object(w, NULL);
		json_string(w, "model", t->models[mi]);
		json_bool(w, "judged", v.judged);
		json_u64(w, "met", v.met);
		json_u64(w, "cliff", v.cliff);
		json_bool(w, "cliff_ok", v.cliff_ok);
		json_double(w, "notify_drop", "%.6g", v.notify_drop);
		json_bool(w, "notify_drop_ok", v.notify_drop_ok);
		json_double(w, "timeout_rise", "%.6g", v.timeout_rise);
		json_double(w, "timeouts_vs_2008", "%.6g", v.timeouts_vs_2008);
		json_bool(w, "timeouts_ok", v.timeouts_ok);
		json_u64(w, "fastest", v.fastest);
		json_bool(w, "fastest_ok", v.fastest_ok);
		json_bool(w, "fastest_separate", v.fastest_separate);
		json_double(w, "dynamic_notifies_per_gib", "%.6g", v.dynamic_notifies);
		json_bool(w, "dynamic_ok", v.dynamic_ok);
		json_end(w);
	}
	json_break(w, 2);
	json_end(w);
}

/* One row of table_write_json: its coordinates and options on one line,
 * its samples on the next, its medians and spreads on two more. */
static void json_row(struct json_writer *w, const struct table *t, unsigned mi, const struct row *r)
{
	json_break(w, 4);
	json_begin_object(w, NULL);
	json_string(w, "vm", t->vm);
	json_string(w, "model", t->models[mi]);
	json_string(w, "row", r->label);
	if (t->nicosts) {
		json_string(w, "indirect", r->mode);
		json_u64(w, "ring", r->ring);
		json_u64(w, "indirect_cost_ns", r->indirect_cost_ns);
	}
	json_begin_array(w, "options");
	for (unsigned k = 0; k < r->nargs; k++)
		json_string(w, NULL, r->args[k]);
	json_end(w);
	json_bool(w, "ok", !r->failed[0]);
	json_string(w, "failed", r->failed);
	json_break(w, 5);
	json_begin_array(w, "samples");
	for (unsigned s = 0; s < r->n; s++) {
		json_begin_object(w, NULL);
		for (unsigned m = 0; m < M_COUNT; m++)
			json_double(w, table_metric_key[m], "%.9g", r->v[s][m]);
		json_end(w);
	}
	json_end(w);
	if (!r->failed[0]) {
		json_break(w, 5);
		json_begin_object(w, "median");
		for (unsigned m = 0; m < M_COUNT; m++)
			json_double(w, table_metric_key[m], "%.9g", r->median[m]);
		json_end(w);
		json_break(w, 5);
		json_begin_object(w, "spread_pct");
		for (unsigned m = 0; m < M_COUNT; m++)
			json_double(w, table_metric_key[m], "%.3f", spread_pct(r, m));
		json_end(w);
	}
	json_end(w);
}

/* The indirect cost sweep's costs and crossovers, one crossover per line
 * and its paired ratios on the next. */
static void json_crossovers(struct json_writer *w, const struct table *t)
{
	struct crossover cx[MAX_CROSSOVERS];
	unsigned ncx = table_crossovers(t, cx);

	json_break(w, 2);
	json_begin_array(w, "indirect_costs_ns");
	for (unsigned c = 0; c < t->nicosts; c++)
		json_u64(w, NULL, t->icosts[c]);
	json_end(w);
	json_break(w, 2);
	json_begin_array(w, "crossover");
	for (unsigned k = 0; k < ncx; k++) {
		json_break(w, 4);
		json_begin_object(w, NULL);
		json_string(w, "model", t->models[cx[k].model]);
		json_u64(w, "ring", cx[k].ring);
		json_string(w, "threshold", cx[k].threshold);
		if (cx[k].found) {
			json_u64(w, "cost_ns", cx[k].cost_ns);
			json_double(w, "threshold_gbit_per_second", "%.6g", cx[k].threshold_gbps);
			json_double(w, "always_gbit_per_second", "%.6g", cx[k].always_gbps);
			json_bool(w, "ranges_overlap", cx[k].threshold_min <= cx[k].always_max);
		} else {
			json_null(w, "cost_ns");
			json_u64(w, "up_to_ns", cx[k].up_to_ns);
			json_bool(w, "measured", cx[k].measured);
		}
		json_break(w, 5);
		json_begin_array(w, "paired_ratio_median");
		for (unsigned c = 0; c < t->nicosts; c++)
			json_double(w, NULL, "%.4f", cx[k].ratio[c]);
		json_end(w);
		if (cx[k].paired_found)
			json_u64(w, "paired_cost_ns", cx[k].paired_cost_ns);
		else
			json_null(w, "paired_cost_ns");
		json_end(w);
	}
	if (ncx)
		json_break(w, 2);
	json_end(w);
}

int table_write_json(const struct table *t)
{
	FILE *f = fopen(t->json, "w");
	struct json_writer w;

	if (!f)
		return diag_fail("--json %s: %s", t->json, strerror(errno));
	json_start(&w, f);
	json_begin_object(&w, NULL);
	json_break(&w, 2);
	json_string(&w, "experiment", t->experiment);
	json_break(&w, 2);
	json_string(&w, "preset", t->preset ? t->preset->name : "none");
	json_break(&w, 2);
	json_string(&w, "vm", t->vm);
	json_break(&w, 2);
	json_u64(&w, "repeat", t->repeat);
	json_break(&w, 2);
	json_string(&w, "host_hypervisor", host_hypervisor());
	json_break(&w, 2);
	json_bool(&w, "emulated", host_is_emulated());
	json_break(&w, 2);
	json_begin_array(&w, "options");
	for (unsigned i = 0; i < t->npass; i++)
		json_string(&w, NULL, t->pass[i]);
	json_end(&w);
	json_break(&w, 2);
	json_begin_array(&w, "rows");
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++)
			json_row(&w, t, mi, &t->rows[mi][i]);
	json_break(&w, 2);
	json_end(&w);
	if (!strcmp(t->experiment, "notify"))
		json_verdicts(&w, t);
	if (t->nicosts)
		json_crossovers(&w, t);
	if (t->tcp) {
		json_break(&w, 2);
		json_string(&w, "net", t->tcp_tap ? "tap" : "user");
		json_break(&w, 2);
		json_u64(&w, "host_loopback_bytes", t->bytes);
		json_break(&w, 2);
		json_begin_array(&w, "host_loopback_seconds");
		for (unsigned k = 0; k < t->nloopback; k++)
			json_double(&w, NULL, "%.6f", t->loopback[k]);
		json_end(&w);
	}
	json_break(&w, 0);
	json_end(&w);
	fputc('\n', f);
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

/* The notify drawing's three panels: what the seed's table has, per GiB,
 * so that ours and 2008's share the axes whatever --bytes was. */
static const enum metric notify_panel_metric[3] = { M_SECONDS, M_TIMEOUTS, M_NOTIFIES };
static const char *const notify_panel_label[3] = { "seconds per GiB", "timeouts per GiB", "notifies per GiB" };

/* One value of the data file; a count that a log scale cannot show is NaN
 * (gnuplot leaves it out). */
static void plot_value(FILE *d, double v, unsigned panel)
{
	if (panel && v <= 0)
		fprintf(d, " NaN");
	else
		fprintf(d, " %.6g", v);
}

/* Each series' static rows -- threshold, then median, min and max of every
 * panel -- and, last, the seed's rows as one more series. */
static void notify_plot_data(FILE *d, const struct table *t)
{
	double g = table_per_gib(t);

	for (unsigned s = 0; s < notify_series(t); s++) {
		char title[40];

		series_title(t, s, title, sizeof(title));
		fprintf(d, "# %s\n", title);
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = series_row(t, s, i);

			if (!r || r->failed[0] || strncmp(r->policy, "static:", 7))
				continue;
			fprintf(d, "%s", r->policy + 7);
			for (unsigned p = 0; p < 3; p++) {
				enum metric m = notify_panel_metric[p];

				plot_value(d, r->median[m] * g, p);
				plot_value(d, r->min[m] * g, p);
				plot_value(d, r->max[m] * g, p);
			}
			fprintf(d, "\n");
		}
		fprintf(d, "\n\n");
	}
	fprintf(d, "# 2008\n");
	for (size_t i = 0; i < paper2008_count; i++) {
		const struct paper_row *p = &paper2008[i];

		if (strncmp(p->policy, "static:", 7))
			continue;
		fprintf(d, "%s", p->policy + 7);
		for (unsigned k = 0; k < 3; k++) {
			double v = k == 0 ? p->seconds : k == 1 ? p->timeouts : p->notifies;

			plot_value(d, v, 1);
			plot_value(d, v, 1);
			plot_value(d, v, 1);
		}
		fprintf(d, "\n");
	}
}

/* A row drawn as a horizontal line in this panel. */
static bool flat_row(const struct row *r, unsigned panel)
{
	return r && !r->failed[0] && strncmp(r->policy, "static:", 7) &&
	       !(panel && r->median[notify_panel_metric[panel]] <= 0);
}

/* Seconds, timeouts and notifies per GiB against the threshold: each
 * series with its min-max bars, the seed's rows in black, the rows that are
 * no threshold (Dynamic, Always, ...) as horizontal lines. */
static void notify_plot_script(FILE *g, const struct table *t, const char *data)
{
	static const char *const colour[4] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd" };
	const struct paper_row *dyn2008 = paper2008_find("dynamic");
	unsigned ns = notify_series(t);
	double per_gib = table_per_gib(t);

	fprintf(g, "set multiplot layout 3,1 title 'lguest-kvm table: notify threshold sweep%s%s%s, per GiB, "
		   "against the seed (2008)'\n"
		   "set key outside right\nset grid\nset xlabel 'static threshold (buffers)'\n",
		t->preset ? ", preset " : "", t->preset ? t->preset->name : "",
		!strcmp(t->experiment, "layout") ? ", split and packed rings" : "");
	for (unsigned panel = 0; panel < 3; panel++) {
		enum metric m = notify_panel_metric[panel];

		fprintf(g, "set ylabel '%s'\n%s\n", notify_panel_label[panel],
			panel ? "set logscale y" : "unset logscale y");
		for (unsigned s = 0; s < ns; s++)
			for (unsigned i = 0; i < t->nrows; i++) {
				const struct row *r = series_row(t, s, i);

				if (flat_row(r, panel))
					fprintf(g, "f%u_%u(x) = %.6g\n", s, i, r->median[m] * per_gib);
			}
		fprintf(g, "plot ");
		for (unsigned s = 0; s < ns; s++) {
			char title[40];
			unsigned col = 2 + 3 * panel;

			series_title(t, s, title, sizeof(title));
			fprintf(g, "%s'%s' index %u using 1:%u:%u:%u with yerrorlines lw 2 lc rgb '%s' title '%s: static'",
				s ? ", " : "", data, s, col, col + 1, col + 2, colour[s % 4], title);
			for (unsigned i = 0; i < t->nrows; i++) {
				const struct row *r = series_row(t, s, i);

				if (flat_row(r, panel))
					fprintf(g, ", f%u_%u(x) with lines dt %u lc rgb '%s' title '%s: %s'", s, i,
						2 + i % 3, colour[s % 4], title, r->label);
			}
		}
		fprintf(g, ", '%s' index %u using 1:%u with linespoints lw 2 pt 7 lc rgb '#000000' title '2008: static'",
			data, ns, 2 + 3 * panel);
		fprintf(g, ", %.6g with lines dt 2 lc rgb '#000000' title '2008: Dynamic'\n",
			panel == 0 ? dyn2008->seconds : panel == 1 ? dyn2008->timeouts : dyn2008->notifies);
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
	unsigned height = !strcmp(t->experiment, "cost") ? 1000 : sweep_plot(t) ? 800 * t->nmodels + 100 : 1000;

	/* An empty plot would only make gnuplot complain about the data. */
	if (!any_row_measured(t)) {
		fprintf(stderr, "lguest-kvm table: --plot %s: no row has data, so no plot was drawn\n", t->plot);
		return 0;
	}
	return gnuplot_draw(t->plot, 900, height, table_plot_data, table_plot_script, t);
}
