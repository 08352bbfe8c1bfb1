/**
 * The PDF report of one device: a summary, a table of energy per day (or month), charts drawn as vectors
 * (daily energy bars; hourly mean voltage lines per phase, of every phase or of the chosen ones, each with
 * its scale and first and last period), the parameters exported, named with their units (a chosen one
 * with its mean, minimum and maximum per day or month, a counter with its lowest and highest reading; every
 * reported one with its range over the period) and the label that tariff figures are simulated.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { localDateString, paramDef } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type PDFKit from 'pdfkit';
import type { DeviceContext, Range } from '../analytics/context.ts';
import { energySeries } from '../analytics/energy.ts';
import { compareGroups, hourlyBilledEnergy } from '../analytics/tariffs.ts';
import { exportParamLabel } from './paramNames.ts';

// pdfkit (and its fonts) load at the first report, not at start-up.
const require = createRequire(import.meta.url);

export const SIMULATED_LABEL = 'Tariff figures are simulated and are not a basis for claims.';

const fmt = (v: number | null | undefined, digits = 2) =>
  v === null || v === undefined ? '—' : v.toFixed(digits);
/** An energy with its unit, or a dash alone when the meter has no such counter. */
const kwh = (v: number | null) => (v === null ? '—' : `${v.toFixed(2)} kWh`);

export async function writePdfReport(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
  path: string,
  /** The parameters exported, in catalogue order: the chosen ones, or every one the device reported. */
  params: readonly string[] = [],
  /** Whether every parameter was asked for: then each is listed with its range, not per period. */
  all = true,
): Promise<void> {
  const days = (range.to - range.from) / 86_400_000;
  const interval = days > 62 ? '1mo' : '1d';
  const PHASE_VOLTAGES = ['vave1', 'vave2', 'vave3'];
  const voltagePhases = all ? PHASE_VOLTAGES : PHASE_VOLTAGES.filter((p) => params.includes(p));
  const stats =
    params.length > 0
      ? await store.series({
          deviceKey: ctx.deviceKey,
          params,
          from: range.from,
          to: range.to,
          interval: '1d',
          stats: ['avg', 'min', 'max'],
          tz: ctx.tz,
        })
      : null;
  const energy = await energySeries(store, ctx, range, interval);
  const hourly = await hourlyBilledEnergy(store, ctx, range);
  const tariffs = (await compareGroups(hourly, ctx.tz, {})).groups;
  const voltage = await store.series({
    deviceKey: ctx.deviceKey,
    params: PHASE_VOLTAGES,
    from: range.from,
    to: range.to,
    interval: days > 62 ? '1d' : '1h',
    stats: ['avg'],
    tz: ctx.tz,
  });
  const sum = (xs: (number | null)[]) =>
    xs.reduce<number | null>((s, v) => (v === null ? s : (s ?? 0) + v), null);

  const PDFDocument = require('pdfkit') as typeof PDFKit;
  const doc = new PDFDocument({
    size: 'A4',
    margin: 48,
    info: { Title: `Kilowatch report — ${ctx.device.name}` },
  });
  const out = createWriteStream(path);
  const failed = new Promise<never>((_, reject) => {
    out.once('error', reject);
    doc.once('error', reject);
  });
  failed.catch(() => {});
  doc.pipe(out);

  doc.fontSize(18).text(`Kilowatch report: ${ctx.device.friendlyName || ctx.device.name}`);
  doc
    .fontSize(10)
    .fillColor('#444')
    .text(`${localDateString(range.from, ctx.tz)} to ${localDateString(range.to - 1, ctx.tz)} (${ctx.tz})`);
  doc.moveDown();
  doc.fillColor('black').fontSize(12).text('Summary', { underline: true });
  doc
    .fontSize(10)
    .text(`Imported: ${kwh(sum(energy.import))}`)
    .text(`Exported: ${kwh(sum(energy.export))}`)
    .text(`Balance (netted per hour): ${kwh(sum(energy.balance))}`);
  // With no energy counters there is nothing to price: only fixed fees would be compared.
  const cheapest = sum(energy.import) === null ? undefined : tariffs[0];
  if (cheapest)
    doc.text(
      `Cheapest tariff group on this energy: ${cheapest.group}, ${fmt(cheapest.cost)} PLN (simulated)`,
    );
  doc.moveDown();

  // Charts: a frame with its scale on the left and the first and last period under it.
  const chartX = 90;
  const chartW = 440;
  const chartH = 120;
  const axisLabel = (text: string, at: number) =>
    doc
      .fillColor('#444')
      .fontSize(8)
      .text(text, chartX - 46, at - 4, { width: 42, align: 'right', lineBreak: false });
  const periods = (top: number, first: string, last: string) => {
    doc.fillColor('#444').fontSize(8);
    doc.text(first, chartX, top + chartH + 3, { width: chartW / 2, lineBreak: false });
    doc.text(last, chartX + chartW / 2, top + chartH + 3, {
      width: chartW / 2,
      align: 'right',
      lineBreak: false,
    });
  };
  const empty = (top: number, text: string) =>
    doc
      .fillColor('#444')
      .fontSize(9)
      .text(text, chartX, top + chartH / 2 - 5, { width: chartW, align: 'center', lineBreak: false });
  const label = (t: number) =>
    interval === '1d' ? localDateString(t, ctx.tz) : localDateString(t, ctx.tz).slice(0, 7);

  // Daily (or monthly) energy as vector bars.
  let y = doc.y;
  doc
    .fillColor('black')
    .fontSize(12)
    .text(`Energy imported per ${interval === '1d' ? 'day' : 'month'} (kWh)`, chartX, y);
  y += 18;
  const max = Math.max(0.001, ...energy.import.map((v) => v ?? 0));
  const barW = chartW / Math.max(1, energy.t.length);
  doc.rect(chartX, y, chartW, chartH).lineWidth(0.5).stroke('#999');
  energy.import.forEach((v, i) => {
    if (!v || v < 0) return;
    const h = (v / max) * chartH;
    doc.rect(chartX + i * barW + barW * 0.1, y + chartH - h, barW * 0.8, h).fill('#2f7ed8');
  });
  if (energy.import.some((v) => v !== null)) {
    axisLabel(fmt(max, max < 10 ? 2 : 1), y);
    axisLabel('0', y + chartH);
  } else empty(y, 'No energy readings in this period.');
  if (energy.t.length > 0) periods(y, label(energy.t[0]!), label(energy.t[energy.t.length - 1]!));
  y += chartH + 26;

  // Mean voltage per phase as vector lines, on a fixed 200–260 V scale with the 230 V nominal marked:
  // every phase in a report of all parameters, else the phases chosen (none: no chart).
  if (voltagePhases.length > 0) y = voltageChart(y);

  function voltageChart(y: number): number {
    doc.fillColor('black').fontSize(12).text('Mean voltage per phase (V)', chartX, y);
    const colors = ['#d62728', '#2ca02c', '#1f77b4'];
    let lx = chartX + chartW;
    for (let k = 2; k >= 0; k--) {
      if (!voltagePhases.includes(PHASE_VOLTAGES[k]!)) continue;
      lx -= 36;
      doc.rect(lx, y + 3, 10, 3).fill(colors[k]!);
      doc
        .fillColor('#444')
        .fontSize(8)
        .text(`L${k + 1}`, lx + 13, y, { lineBreak: false });
    }
    y += 18;
    doc.rect(chartX, y, chartW, chartH).lineWidth(0.5).stroke('#999');
    const lo = 200;
    const hi = 260;
    const yOf = (v: number) => y + chartH - ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo)) * chartH;
    const phases = PHASE_VOLTAGES.map((p) =>
      voltagePhases.includes(p) ? (voltage.series[p]?.avg ?? []) : [],
    );
    if (phases.some((avg) => avg.some((v) => v !== null))) {
      // The nominal 230 V under the lines, then one line per phase, broken where a bucket is empty.
      doc
        .moveTo(chartX, yOf(230))
        .lineTo(chartX + chartW, yOf(230))
        .dash(3, { space: 3 })
        .lineWidth(0.5)
        .stroke('#999')
        .undash();
      for (const v of [lo, 230, hi]) axisLabel(`${v}`, yOf(v));
      phases.forEach((avg, k) => {
        let started = false;
        avg.forEach((v, i) => {
          if (v === null || v === undefined) {
            started = false;
            return;
          }
          const px = chartX + (i / Math.max(1, avg.length - 1)) * chartW;
          if (started) doc.lineTo(px, yOf(v));
          else doc.moveTo(px, yOf(v));
          started = true;
        });
        if (avg.some((v) => v !== null)) doc.lineWidth(0.8).stroke(colors[k]!);
      });
    } else empty(y, 'No voltage readings in this period.');
    if (voltage.t.length > 0)
      periods(
        y,
        localDateString(voltage.t[0]!, ctx.tz),
        localDateString(voltage.t[voltage.t.length - 1]!, ctx.tz),
      );
    return y + chartH + 26;
  }

  // Energy table.
  doc.fillColor('black').fontSize(12).text('Energy table (kWh)', chartX, y);
  doc.moveDown(0.5);
  doc.fontSize(9);
  const rows = energy.t.map((t, i) => [
    label(t),
    fmt(energy.import[i], 3),
    fmt(energy.export[i], 3),
    fmt(energy.balance[i], 3),
  ]);
  const cols = [chartX, chartX + 120, chartX + 220, chartX + 320];
  const header = ['Period', 'Import', 'Export', 'Balance'];
  const line = (cells: string[]) => {
    if (doc.y > 760) doc.addPage();
    const ly = doc.y;
    for (const [i, c] of cells.entries()) doc.text(c, cols[i]!, ly, { width: 95, lineBreak: false });
    doc.moveDown(0.6);
  };
  line(header);
  for (const r of rows) line(r);
  doc.moveDown();

  // The parameters exported, each named with its unit.
  if (stats) {
    const heading = (text: string) => {
      if (doc.y > 720) doc.addPage();
      doc.fillColor('black').fontSize(12).text(text, chartX);
      doc.moveDown(0.5);
      doc.fontSize(9);
    };
    const counter = (p: string) => paramDef(p)?.kind === 'counter';
    const of = (p: string) => stats.series[p] ?? {};
    if (all) {
      // Every reported parameter: its lowest and highest over the period (tens of them: no table per day).
      heading('Parameters reported (lowest and highest in the period)');
      line(['Parameter', '', 'Min', 'Max']);
      for (const p of params) {
        const lowest = extreme(of(p).min ?? [], Math.min);
        const highest = extreme(of(p).max ?? [], Math.max);
        lineWide([exportParamLabel(p), fmt(lowest, 3), fmt(highest, 3)]);
      }
    } else {
      for (const p of params) {
        const periodsOf = byPeriod(stats.t, of(p), interval, ctx.tz);
        heading(`${exportParamLabel(p)} per ${interval === '1d' ? 'day' : 'month'}`);
        if (counter(p)) {
          // A counter's mean says nothing: its lowest and highest reading of the period and the difference
          // (the energy used, counted to the next period's first reading, is in the energy table).
          line(['Period', 'Lowest', 'Highest', 'Highest - lowest']);
          for (const r of periodsOf)
            line([
              r.period,
              fmt(r.min, 3),
              fmt(r.max, 3),
              fmt(r.min === null || r.max === null ? null : r.max - r.min, 3),
            ]);
        } else {
          line(['Period', 'Mean', 'Min', 'Max']);
          for (const r of periodsOf) line([r.period, fmt(r.mean, 3), fmt(r.min, 3), fmt(r.max, 3)]);
        }
        if (periodsOf.every((r) => r.mean === null && r.min === null && r.max === null)) {
          doc.fillColor('#444').text('No readings in this period.', chartX);
          doc.fillColor('black');
        }
        doc.moveDown();
      }
    }
  }
  function lineWide(cells: [string, string, string]) {
    if (doc.y > 760) doc.addPage();
    const ly = doc.y;
    doc.text(cells[0], cols[0]!, ly, { width: 215, lineBreak: false });
    doc.text(cells[1], cols[2]!, ly, { width: 95, lineBreak: false });
    doc.text(cells[2], cols[3]!, ly, { width: 95, lineBreak: false });
    doc.moveDown(0.6);
  }
  doc.moveDown();
  doc.fontSize(9).fillColor('#a00').text(SIMULATED_LABEL, chartX);
  doc.end();
  await Promise.race([once(out, 'finish'), failed]);
}

/** The lowest or highest of the non-null values; null when there are none. */
function extreme(xs: readonly (number | null)[], pick: (a: number, b: number) => number): number | null {
  let out: number | null = null;
  for (const v of xs) if (v !== null && v !== undefined) out = out === null ? v : pick(out, v);
  return out;
}

interface PeriodStats {
  period: string;
  mean: number | null;
  min: number | null;
  max: number | null;
}

/**
 * Daily statistics as rows per day, or folded into months: a month's minimum and maximum are its days'
 * lowest and highest, its mean the mean of its daily means.
 */
export function byPeriod(
  t: readonly number[],
  s: { avg?: (number | null)[]; min?: (number | null)[]; max?: (number | null)[] },
  interval: '1d' | '1mo',
  tz: string,
): PeriodStats[] {
  const out: PeriodStats[] = [];
  let sum = 0;
  let n = 0;
  for (let i = 0; i < t.length; i++) {
    const day = localDateString(t[i]!, tz);
    const period = interval === '1d' ? day : day.slice(0, 7);
    let row = out[out.length - 1];
    if (row?.period !== period) {
      row = { period, mean: null, min: null, max: null };
      out.push(row);
      sum = 0;
      n = 0;
    }
    const avg = s.avg?.[i] ?? null;
    const min = s.min?.[i] ?? null;
    const max = s.max?.[i] ?? null;
    if (avg !== null) {
      sum += avg;
      n++;
      row.mean = sum / n;
    }
    if (min !== null) row.min = row.min === null ? min : Math.min(row.min, min);
    if (max !== null) row.max = row.max === null ? max : Math.max(row.max, max);
  }
  return out;
}
