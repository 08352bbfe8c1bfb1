/**
 * Import history into one device (docs/api.md §History import): a file is dropped or picked, its first
 * rows previewed with the detected columns and the mapping to adjust, the upload watched with a progress
 * bar, its result shown with its row errors, and past imports listed with an undo.
 */
import {
  DEFAULT_TIMEZONE,
  detailsPathFor,
  IMPORT_FORMATS,
  type ImportFormat,
  type ImportJob,
} from '@kilowatch/core';
import { Alert, Anchor, Button, Card, Group, Radio, Select, Stack, Text, Title } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useDevice } from '../../api/devices/get-device.ts';
import { useDeviceImports, useImportJob } from '../../api/imports/get-imports.ts';
import { type ImportRequest, useStartImport } from '../../api/imports/start-import.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { ErrorState, RoutePending } from '../../shared/ui/RouteStates.tsx';
import { FileDrop } from './FileDrop.tsx';
import {
  type CsvForm,
  csvMappingOf,
  detectFormat,
  detectSeparator,
  type FieldMapping,
  guessCsvForm,
  HEAD_BYTES,
  headLines,
  lineProtocolMappingOf,
  type Precision,
  previewTable,
} from './filePreview.ts';
import { ImportHistory } from './ImportHistory.tsx';
import { ImportProgress, ImportResult } from './ImportResult.tsx';
import { importMessage } from './importMessages.ts';
import { CsvMappingForm, isEnergyParam, LineProtocolMappingForm } from './MappingForm.tsx';
import { FilePreview, ParsedPreviewTable } from './PreviewTables.tsx';
import { type ImportOptions, parsePreview } from './parsedPreview.ts';

interface Picked {
  file: File;
  head: string;
  /** The head is the whole file. */
  whole: boolean;
}

export default function ImportPage() {
  const { id } = useParams({ strict: false }) as { id: string };
  const deviceId = Number(id);
  const { t } = useT();
  const device = useDevice(id);
  const [picked, setPicked] = useState<Picked | null>(null);
  const [format, setFormat] = useState<ImportFormat>('csv');
  const [csv, setCsv] = useState<CsvForm | null>(null);
  const [fields, setFields] = useState<FieldMapping[]>([]);
  const [precision, setPrecision] = useState<Precision>('ns');
  const [sourceDevice, setSourceDevice] = useState<string | null>(null);
  const [onConflict, setOnConflict] = useState<'keep' | 'replace'>('keep');
  const [jobId, setJobId] = useState<number | null>(null);
  const [failure, setFailure] = useState<{ message: string; details: string[] } | null>(null);
  const uploadSize = useRef(0);
  const start = useStartImport();
  const list = useDeviceImports(deviceId, start.isPending);
  const job = useImportJob(jobId);
  const zone = displayTimeZone() || DEFAULT_TIMEZONE;

  const lines = useMemo(() => (picked ? headLines(picked.head, picked.whole) : []), [picked]);
  const separator = csv?.separator ?? (lines[0] ? detectSeparator(lines[0]) : ',');
  const table = useMemo(() => previewTable(lines, format, separator), [lines, format, separator]);

  const choose = async (file: File) => {
    const whole = file.size <= HEAD_BYTES;
    const head = await file.slice(0, HEAD_BYTES).text();
    const ls = headLines(head, whole);
    const f = detectFormat(ls);
    const sep = ls[0] ? detectSeparator(ls[0]) : ',';
    const tbl = previewTable(ls, f, sep);
    setPicked({ file, head, whole });
    setFormat(f);
    setCsv(guessCsvForm(previewTable(ls, 'csv', sep), sep, zone));
    setFields(tbl.fields.map((x) => ({ ...x, param: '', reading: 'counter-kWh' })));
    setSourceDevice(tbl.devices.length > 1 ? (tbl.devices[0] ?? null) : null);
    setJobId(null);
    setFailure(null);
  };

  // A CSV's columns follow its separator: the mapping is guessed again when the separator changes.
  const csvColumns = table.columns;
  useEffect(() => {
    if (!csv || format !== 'csv') return;
    const known = new Set([csv.timestampColumn, ...csv.values.map((v) => v.column)]);
    const columns = new Set(csvColumns);
    if (columns.size === known.size && [...columns].every((c) => known.has(c))) return;
    setCsv(guessCsvForm(table, csv.separator, csv.zone));
  }, [csv, csvColumns, format, table]);

  const options = useMemo((): ImportOptions | null => {
    if (format === 'kilowatch') return { format, ...(sourceDevice ? { sourceDevice } : {}) };
    if (format === 'csv') return csv ? { format, mapping: csvMappingOf(csv, isEnergyParam) } : null;
    return csv ? { format, mapping: lineProtocolMappingOf(fields, precision, csv, isEnergyParam) } : null;
  }, [format, csv, fields, precision, sourceDevice]);

  // A CSV or line-protocol file with nothing mapped yet has nothing to preview, nor to import.
  const unmapped = options !== null && options.format !== 'kilowatch' && mappedCount(options) === 0;
  const parsed = useMemo(
    () => (picked && options && !unmapped ? parsePreview(wholeLines(picked), picked.whole, options) : null),
    [picked, options, unmapped],
  );

  // Once the import has finished, the list shows it so too.
  const finishedState = job.data?.state;
  const refetchList = list.refetch;
  useEffect(() => {
    if (finishedState && finishedState !== 'running') void refetchList();
  }, [finishedState, refetchList]);

  if (device.isPending) return <RoutePending />;
  if (device.isError) return <ErrorState error={device.error} onRetry={() => void device.refetch()} />;
  const d = device.data;
  const jobs = list.data ?? [];
  // While the POST is in flight, the device's list shows the import running with its bytes read so far.
  const running: ImportJob | null = start.isPending
    ? (jobs.find((j) => j.state === 'running') ?? null)
    : null;
  const finished = job.data && job.data.state !== 'running' ? job.data : null;
  const finishing = jobId !== null && !finished;

  const submit = () => {
    if (!picked || !options) return;
    setFailure(null);
    setJobId(null);
    uploadSize.current = picked.file.size;
    const r: ImportRequest = { deviceId, file: picked.file, format, onConflict };
    if (options.format === 'kilowatch' && options.sourceDevice) r.sourceDevice = options.sourceDevice;
    if (options.format !== 'kilowatch') r.mapping = JSON.stringify(options.mapping);
    if (options.format === 'csv') r.zone = options.mapping.zone;
    start.mutate(r, {
      onSuccess: ({ id: created }) => setJobId(created),
      onError: (e) =>
        setFailure(
          e instanceof ApiError
            ? {
                message: importMessage(t, translateServerMessage, e.message),
                details: Object.values(e.errors).flat(),
              }
            : { message: t('msg.internal'), details: [] },
        ),
    });
  };

  return (
    <Stack gap="md">
      <Stack gap={2}>
        <Title order={1} fz="h2" data-testid="import-title">
          {t('imports.title')}
        </Title>
        <Text size="sm" c="dimmed">
          {d.name}
        </Text>
        <Anchor component={Link} to={detailsPathFor(d.id, d.typeCode, d.phases ?? 3)} size="sm">
          {t('imports.back')}
        </Anchor>
      </Stack>
      <Text size="sm">{t('imports.intro')}</Text>
      <Card withBorder>
        <Stack gap="md">
          <FileDrop file={picked?.file ?? null} onFile={(f) => void choose(f)} disabled={start.isPending} />
          {picked && (
            <>
              <Radio.Group
                label={t('imports.format')}
                value={format}
                onChange={(f) => setFormat(f as ImportFormat)}
                data-testid="import-format"
              >
                <Group gap="md" mt={4} wrap="wrap">
                  {IMPORT_FORMATS.map((f) => (
                    <Radio
                      key={f}
                      value={f}
                      label={t(`imports.format.${f}`)}
                      data-testid={`import-format-${f}`}
                    />
                  ))}
                </Group>
              </Radio.Group>
              <FilePreview table={table} />
              {(format !== 'kilowatch' || table.devices.length > 1) && (
                <Title order={2} fz="h4">
                  {t('imports.mapping.title')}
                </Title>
              )}
              {format === 'csv' && csv && (
                <CsvMappingForm form={csv} columns={table.columns} onChange={setCsv} />
              )}
              {format === 'kilowatch' && table.devices.length > 1 && (
                <Select
                  label={t('imports.mapping.sourceDevice')}
                  description={t('imports.mapping.sourceDevice.hint')}
                  data={table.devices}
                  value={sourceDevice}
                  onChange={setSourceDevice}
                  allowDeselect={false}
                  data-testid="import-source-device"
                />
              )}
              {format === 'line-protocol' && csv && (
                <LineProtocolMappingForm
                  fields={fields}
                  onFields={setFields}
                  precision={precision}
                  onPrecision={setPrecision}
                  clock={csv}
                  onClock={setCsv}
                />
              )}
              {unmapped && (
                <Text size="sm" c="dimmed" data-testid="import-preview-none">
                  {t('imports.preview.none')}
                </Text>
              )}
              {parsed && <ParsedPreviewTable preview={parsed} />}
              <Radio.Group
                label={t('imports.onConflict')}
                value={onConflict}
                onChange={(c) => setOnConflict(c as 'keep' | 'replace')}
                data-testid="import-on-conflict"
              >
                <Group gap="md" mt={4} wrap="wrap">
                  {(['keep', 'replace'] as const).map((c) => (
                    <Radio
                      key={c}
                      value={c}
                      label={t(`imports.onConflict.${c}`)}
                      data-testid={`import-on-conflict-${c}`}
                    />
                  ))}
                </Group>
              </Radio.Group>
              <Group>
                <Button
                  onClick={submit}
                  loading={start.isPending}
                  disabled={!parsed || parsed.problem !== null}
                  data-testid="import-start"
                >
                  {t('imports.start')}
                </Button>
              </Group>
            </>
          )}
          {(start.isPending || finishing) && (
            <ImportProgress job={running ?? job.data ?? null} size={uploadSize.current} />
          )}
          {failure && (
            <Alert color="red" title={failure.message} role="alert" data-testid="import-refused">
              {failure.details.map((x) => (
                <Text key={x} size="sm">
                  {x}
                </Text>
              ))}
            </Alert>
          )}
          {finished && <ImportResult job={finished} />}
        </Stack>
      </Card>
      {list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : list.isPending ? null : (
        <ImportHistory jobs={jobs} />
      )}
    </Stack>
  );
}

/** Columns or fields mapped to a parameter. */
function mappedCount(o: ImportOptions): number {
  if (o.format === 'csv') return o.mapping.values.length;
  if (o.format === 'line-protocol') return o.mapping.fields.length;
  return 1;
}

/** The head up to its last line break (a line cut by the head's end is left to the server). */
function wholeLines(p: Picked): string {
  return p.whole ? p.head : p.head.slice(0, p.head.lastIndexOf('\n') + 1);
}
