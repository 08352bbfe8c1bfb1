import { PARAM_NAMES } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { fileNameFromDisposition } from './fileName.ts';
import { exportableParams } from './params.ts';
import { applyNews, type ExportNews, type ExportProgress, percent, scheduled } from './progress.ts';
import {
  type ExportForm,
  exportRange,
  exportRefusal,
  hasErrors,
  MAX_EXPORT_RANGE_DAYS,
  validateExport,
} from './validation.ts';

const TZ = 'Europe/Warsaw';
const base: ExportForm = {
  format: 'csv',
  mode: 'all',
  params: [],
  from: '2026-03-01',
  to: '2026-03-07',
  fileName: '',
};

describe('validateExport', () => {
  it.each([
    { name: 'a complete form', form: {}, errors: {} },
    { name: 'no file type', form: { format: null }, errors: { format: 'val.fileType' } },
    {
      name: 'a selection without parameters',
      form: { mode: 'selected' as const },
      errors: { params: 'val.param' },
    },
    {
      name: 'a selection with a parameter',
      form: { mode: 'selected' as const, params: ['vave1'] },
      errors: {},
    },
    { name: '"all" needs no selection', form: { mode: 'all' as const, params: [] }, errors: {} },
    { name: 'no start', form: { from: '' }, errors: { range: 'val.dateRange' } },
    { name: 'no end', form: { to: '  ' }, errors: { range: 'val.dateRange' } },
    { name: 'a malformed day', form: { from: '2026-3-1' }, errors: { range: 'val.dateRange' } },
    { name: 'an end before the start', form: { from: '2026-03-08' }, errors: { range: 'val.dateRange' } },
    { name: 'one day', form: { from: '2026-03-07' }, errors: {} },
    { name: 'exactly 400 days', form: { from: '2025-01-01', to: '2026-02-04' }, errors: {} },
    {
      name: '401 days',
      form: { from: '2025-01-01', to: '2026-02-05' },
      errors: { range: 'msg.rangeTooLong' },
    },
    {
      name: 'two years',
      form: { from: '2024-01-01', to: '2025-12-31' },
      errors: { range: 'msg.rangeTooLong' },
    },
    {
      name: 'every rule at once',
      form: { format: null, mode: 'selected' as const, from: '' },
      errors: { format: 'val.fileType', params: 'val.param', range: 'val.dateRange' },
    },
  ])('$name', ({ form, errors }) => {
    const found = validateExport({ ...base, ...form }, TZ);
    expect(found).toEqual(errors);
    expect(hasErrors(found)).toBe(Object.keys(errors).length > 0);
  });

  it('matches the server limit of 400 days', () => {
    expect(MAX_EXPORT_RANGE_DAYS).toBe(400);
  });
});

describe('exportRange', () => {
  it.each([
    // Winter: midnight in Warsaw is 23:00 UTC the day before; the last day is included.
    { from: '2026-01-10', to: '2026-01-10', range: ['2026-01-09T23:00:00.000Z', '2026-01-10T23:00:00.000Z'] },
    // Across the spring change: the last day has 23 hours.
    { from: '2026-03-28', to: '2026-03-29', range: ['2026-03-27T23:00:00.000Z', '2026-03-29T22:00:00.000Z'] },
    // Across the autumn change: 25 hours.
    { from: '2026-10-25', to: '2026-10-25', range: ['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z'] },
    { from: '2026-01-11', to: '2026-01-10', range: null },
    { from: 'x', to: '2026-01-10', range: null },
  ])('$from … $to', ({ from, to, range }) => {
    const r = exportRange(from, to, TZ);
    expect(r && [new Date(r.from).toISOString(), new Date(r.to).toISOString()]).toEqual(range);
  });
});

describe('fileNameFromDisposition', () => {
  it.each([
    { header: 'attachment; filename="meter_2026-03-01.csv"', name: 'meter_2026-03-01.csv' },
    { header: 'attachment; filename=report.pdf', name: 'report.pdf' },
    { header: "attachment; filename*=UTF-8''%C5%81%C3%B3d%C5%BA.csv", name: 'Łódź.csv' },
    {
      header: 'attachment; filename="fallback.csv"; filename*=UTF-8\'\'pr%C3%A9f%C3%A9r%C3%A9.csv',
      name: 'préféré.csv',
    },
    { header: 'attachment; filename="a \\"quoted\\" name.csv"', name: 'a "quoted" name.csv' },
    { header: 'attachment; filename="../../etc/passwd"', name: 'passwd' },
    { header: 'attachment; filename="C:\\\\dir\\\\x.zip"', name: 'x.zip' },
    { header: "attachment; filename*=UTF-8''%E0%A4%A.csv", name: 'export.csv' },
    { header: 'attachment', name: 'export.csv' },
    { header: 'attachment; filename=""', name: 'export.csv' },
    { header: null, name: 'export.csv' },
  ])('$header → $name', ({ header, name }) => {
    expect(fileNameFromDisposition(header, 'export.csv')).toBe(name);
  });
});

describe('export progress', () => {
  const run = (news: ExportNews[], start: ExportProgress = scheduled(7)) => news.reduce(applyNews, start);

  it.each([
    { name: 'nothing yet', news: [], status: 'queued', progress: 0 },
    {
      name: 'running',
      news: [{ id: 7, status: 'running', progress: 0.25 }],
      status: 'running',
      progress: 0.25,
    },
    {
      name: 'ids as strings',
      news: [{ id: '7', status: 'running', progress: 0.5 }],
      status: 'running',
      progress: 0.5,
    },
    {
      name: 'progress never goes back (a late poll after a hub event)',
      news: [
        { id: 7, status: 'running', progress: 0.6 },
        { id: 7, status: 'running', progress: 0.3 },
      ],
      status: 'running',
      progress: 0.6,
    },
    {
      name: 'a late "queued" after "running" is ignored',
      news: [
        { id: 7, status: 'running', progress: 0.1 },
        { id: 7, status: 'queued', progress: 0 },
      ],
      status: 'running',
      progress: 0.1,
    },
    { name: 'done is 100 %', news: [{ id: 7, status: 'done', progress: 0.95 }], status: 'done', progress: 1 },
    {
      name: 'done stays done',
      news: [
        { id: 7, status: 'done', progress: 1 },
        { id: 7, status: 'running', progress: 0.5 },
        { id: 7, status: 'failed', progress: 0 },
      ],
      status: 'done',
      progress: 1,
    },
    {
      name: 'failed stays failed',
      news: [
        { id: 7, status: 'failed', progress: 0.4 },
        { id: 7, status: 'done', progress: 1 },
      ],
      status: 'failed',
      progress: 0.4,
    },
    {
      name: 'other jobs are ignored',
      news: [{ id: 8, status: 'done', progress: 1 }],
      status: 'queued',
      progress: 0,
    },
    {
      name: 'unknown statuses are ignored',
      news: [{ id: 7, status: 'paused', progress: 0.5 }],
      status: 'queued',
      progress: 0,
    },
    {
      name: 'progress is clamped',
      news: [{ id: 7, status: 'running', progress: 7 }],
      status: 'running',
      progress: 1,
    },
    {
      name: 'a missing progress keeps the last',
      news: [{ id: 7, status: 'running' }],
      status: 'running',
      progress: 0,
    },
  ])('$name', ({ news, status, progress }) => {
    const s = run(news);
    expect(s.status).toBe(status);
    expect(s.progress).toBe(progress);
  });

  it('keeps the file name and error a poll reports', () => {
    const s = run([
      { id: 7, status: 'failed', progress: 0.2, fileName: 'x.csv', error: 'Exporting data failed.' },
    ]);
    expect(s).toEqual({
      id: 7,
      status: 'failed',
      progress: 0.2,
      fileName: 'x.csv',
      error: 'Exporting data failed.',
    });
  });

  it.each([
    [0, 0],
    [0.004, 0],
    [0.255, 26],
    [1, 100],
  ])('%f → %i %', (p, pct) => {
    expect(percent({ id: 1, status: 'running', progress: p })).toBe(pct);
  });
});

describe('exportableParams', () => {
  it.each([
    {
      name: 'what a device reports, in catalogue order',
      reported: [{ vave2: 1, vave1: 2, frq1: 3 }],
      preset: [],
      out: ['vave1', 'vave2', 'frq1'],
    },
    {
      name: 'the union of several devices',
      reported: [{ tempmain: 1 }, { vave1: 2 }],
      preset: [],
      out: ['vave1', 'tempmain'],
    },
    {
      name: 'preselected names are offered',
      reported: [{ vave1: 1 }],
      preset: ['pave1'],
      out: ['pave1', 'vave1'],
    },
    { name: 'unknown names are not', reported: [{ vave1: 1, bogus: 2 }], preset: ['nope'], out: ['vave1'] },
    {
      name: 'nothing reported yet: the whole catalogue',
      reported: [undefined],
      preset: [],
      out: [...PARAM_NAMES],
    },
  ])('$name', ({ reported, preset, out }) => {
    expect(exportableParams(reported, preset)).toEqual(out);
  });
});

describe('exportRefusal', () => {
  it.each([
    {
      name: '503: the queue is full',
      err: { status: 503, message: 'Export unavailable' },
      out: { kind: 'unavailable' },
    },
    {
      name: '400 on the range',
      err: { status: 400, message: 'Data range is too long.', errors: { to: ['Data range is too long.'] } },
      out: { kind: 'fields', errors: { range: 'msg.rangeTooLong' } },
    },
    {
      name: '400 without field errors but the range message',
      err: { status: 400, message: 'Data range is too long.' },
      out: { kind: 'fields', errors: { range: 'msg.rangeTooLong' } },
    },
    {
      name: '400 on a missing date',
      err: { status: 400, message: 'Date range is required.', errors: { from: ['Date range is required.'] } },
      out: { kind: 'fields', errors: { range: 'val.dateRange' } },
    },
    {
      name: '400 on format and params',
      err: {
        status: 400,
        message: 'Select file type to export.',
        errors: {
          format: ['Select file type to export.'],
          params: ['Please select at least one parameter.'],
        },
      },
      out: { kind: 'fields', errors: { format: 'val.fileType', params: 'val.param' } },
    },
    {
      name: '400 on a field the form lacks',
      err: {
        status: 400,
        message: 'Field cannot be empty.',
        errors: { deviceIds: ['Field cannot be empty.'] },
      },
      out: { kind: 'failed', detail: 'Field cannot be empty.' },
    },
    {
      name: '500',
      err: { status: 500, message: 'Internal server error. Please contact with server administrator.' },
      out: { kind: 'failed', detail: 'Internal server error. Please contact with server administrator.' },
    },
    {
      name: 'network',
      err: { status: 0, message: 'Network connection problem' },
      out: { kind: 'failed', detail: 'Network connection problem' },
    },
  ])('$name', ({ err, out }) => {
    expect(exportRefusal(err as Parameters<typeof exportRefusal>[0])).toEqual(out);
  });
});
