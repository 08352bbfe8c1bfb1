/**
 * The PDF report of one device: a summary, a table of energy per day (or month), charts drawn as vectors
 * (daily energy bars, hourly mean voltage lines) and the label that tariff figures are simulated.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { localDateString } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import PDFDocument from 'pdfkit';
import type { DeviceContext, Range } from '../analytics/context.ts';
import { energySeries } from '../analytics/energy.ts';
import { compareGroups, hourlyBilledEnergy } from '../analytics/tariffs.ts';

export const SIMULATED_LABEL = 'Tariff figures are simulated and are not a basis for claims.';

const fmt = (v: number | null | undefined, digits = 2) =>
  v === null || v === undefined ? '—' : v.toFixed(digits);

export async function writePdfReport(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
  path: string,
): Promise<void> {
  const days = (range.to - range.from) / 86_400_000;
  const interval = days > 62 ? '1mo' : '1d';
  const energy = await energySeries(store, ctx, range, interval);
  const hourly = await hourlyBilledEnergy(store, ctx, range);
  const tariffs = compareGroups(hourly, ctx.tz, {});
  const voltage = await store.series({
    deviceKey: ctx.deviceKey,
    params: ['vave1', 'vave2', 'vave3'],
    from: range.from,
    to: range.to,
    interval: days > 62 ? '1d' : '1h',
    stats: ['avg'],
    tz: ctx.tz,
  });
  const sum = (xs: (number | null)[]) =>
    xs.reduce<number | null>((s, v) => (v === null ? s : (s ?? 0) + v), null);

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
    .text(`Imported: ${fmt(sum(energy.import))} kWh`)
    .text(`Exported: ${fmt(sum(energy.export))} kWh`)
    .text(`Balance (netted per hour): ${fmt(sum(energy.balance))} kWh`);
  const cheapest = tariffs[0];
  if (cheapest)
    doc.text(
      `Cheapest tariff group on this energy: ${cheapest.group}, ${fmt(cheapest.cost)} PLN (simulated)`,
    );
  doc.moveDown();

  // Daily (or monthly) energy as vector bars.
  const chartX = 60;
  const chartW = 470;
  const chartH = 120;
  let y = doc.y;
  doc.fontSize(12).text(`Energy imported per ${interval === '1d' ? 'day' : 'month'} (kWh)`, chartX, y);
  y += 18;
  const max = Math.max(0.001, ...energy.import.map((v) => v ?? 0));
  const barW = chartW / Math.max(1, energy.t.length);
  doc.rect(chartX, y, chartW, chartH).lineWidth(0.5).stroke('#999');
  energy.import.forEach((v, i) => {
    if (!v) return;
    const h = (v / max) * chartH;
    doc.rect(chartX + i * barW + barW * 0.1, y + chartH - h, barW * 0.8, h).fill('#2f7ed8');
  });
  y += chartH + 16;

  // Mean voltage per phase as vector lines.
  doc.fillColor('black').fontSize(12).text('Mean voltage per phase (V)', chartX, y);
  y += 18;
  doc.rect(chartX, y, chartW, chartH).lineWidth(0.5).stroke('#999');
  const colors = ['#d62728', '#2ca02c', '#1f77b4'];
  const lo = 200;
  const hi = 260;
  ['vave1', 'vave2', 'vave3'].forEach((p, k) => {
    const avg = voltage.series[p]?.avg ?? [];
    let started = false;
    avg.forEach((v, i) => {
      if (v === null || v === undefined) {
        started = false;
        return;
      }
      const px = chartX + (i / Math.max(1, avg.length - 1)) * chartW;
      const py = y + chartH - ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo)) * chartH;
      if (started) doc.lineTo(px, py);
      else doc.moveTo(px, py);
      started = true;
    });
    if (avg.some((v) => v !== null)) doc.lineWidth(0.8).stroke(colors[k]!);
  });
  y += chartH + 16;

  // Energy table.
  doc.fillColor('black').fontSize(12).text('Energy table (kWh)', chartX, y);
  doc.moveDown(0.5);
  doc.fontSize(9);
  const rows = energy.t.map((t, i) => [
    interval === '1d' ? localDateString(t, ctx.tz) : localDateString(t, ctx.tz).slice(0, 7),
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
  doc.fontSize(9).fillColor('#a00').text(SIMULATED_LABEL, chartX);
  doc.end();
  await Promise.race([once(out, 'finish'), failed]);
}
