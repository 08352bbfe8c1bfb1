/**
 * Export (docs/spec.md §2 "Export", §5, §8; docs/api.md §Exports): CSV or PDF, all parameters or a selection, a
 * required date range and an optional file name. After the server accepts the job (202) the dialog
 * follows it through hub events, with polling as the fallback, and downloads the file when it is done.
 */
import type { ExportRequest } from '@kilowatch/core';
import {
  Alert,
  Button,
  Group,
  Modal,
  MultiSelect,
  Progress,
  Radio,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useQueries } from '@tanstack/react-query';
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useCreateExport } from '../../api/exports/create-export.ts';
import { downloadExport, saveFile } from '../../api/exports/download-export.ts';
import { useExportJob } from '../../api/exports/get-export.ts';
import { latestQueryOptions } from '../../api/telemetry/get-latest.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { useExportEvents } from '../../hub/exports.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { dayjs } from '../../lib/time.ts';
import { DateField } from '../../ranges/DateField.tsx';
import { paramSelectData } from '../devices/paramNames.ts';
import { exportableParams } from './params.ts';
import { applyNews, type ExportProgress, isTerminal, percent, scheduled } from './progress.ts';
import {
  type ExportForm,
  type ExportFormErrors,
  exportRange,
  exportRefusal,
  hasErrors,
  validateExport,
} from './validation.ts';

export interface ExportButtonProps {
  deviceIds: number[];
  /** Parameters to preselect (the selection mode starts with them). */
  params?: string[];
}

function initialForm(tz: string, params: readonly string[] | undefined): ExportForm {
  const today = dayjs().tz(tz);
  return {
    format: null,
    mode: params && params.length > 0 ? 'selected' : 'all',
    params: params ?? [],
    from: today.subtract(6, 'day').format('YYYY-MM-DD'),
    to: today.format('YYYY-MM-DD'),
    fileName: '',
  };
}

function useFollowExport(
  job: ExportProgress | null,
  setJob: (f: (j: ExportProgress | null) => ExportProgress | null) => void,
) {
  useExportEvents(useCallback((e) => setJob((j) => (j ? applyNews(j, e) : j)), [setJob]));
  const polled = useExportJob(job && !isTerminal(job.status) ? job.id : null);
  useEffect(() => {
    const data = polled.data;
    if (data) setJob((j) => (j ? applyNews(j, data) : j));
  }, [polled.data, setJob]);
}

export function ExportButton({ deviceIds, params }: ExportButtonProps) {
  const { t } = useT();
  const tz = displayTimeZone();
  const [opened, setOpened] = useState(false);
  const [form, setForm] = useState<ExportForm>(() => initialForm(tz, params));
  const [touched, setTouched] = useState(false);
  const [server, setServer] = useState<ExportFormErrors>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [job, setJob] = useState<ExportProgress | null>(null);
  const [downloading, setDownloading] = useState(false);
  const downloaded = useRef(new Set<number>());
  const create = useCreateExport();

  useFollowExport(job, setJob);

  const latest = useQueries({
    queries: deviceIds.map((id) => ({ ...latestQueryOptions(String(id)), enabled: opened })),
  });
  const reported = latest.map((q) => q.data?.values);
  const reportedKey = JSON.stringify(reported.map((r) => Object.keys(r ?? {})));
  // biome-ignore lint/correctness/useExhaustiveDependencies: recomputed when the reported names change
  const options = useMemo(() => exportableParams(reported, params), [reportedKey, params]);

  const errors = touched ? { ...validateExport(form, tz), ...server } : server;
  const set = <K extends keyof ExportForm>(key: K, value: ExportForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    setServer((s) => {
      const next = { ...s };
      if (key === 'format') delete next.format;
      if (key === 'params' || key === 'mode') delete next.params;
      if (key === 'from' || key === 'to') delete next.range;
      return next;
    });
  };

  const download = useCallback(
    async (id: number, fallback: string) => {
      setDownloading(true);
      try {
        saveFile(await downloadExport(id, fallback));
      } catch (err) {
        notify({
          color: 'red',
          title: t('msg.exportFailed'),
          message: err instanceof Error ? translateServerMessage(err.message) : String(err),
        });
      } finally {
        setDownloading(false);
      }
    },
    [t],
  );

  // The file is fetched once, as soon as the job is done; a button offers it again.
  useEffect(() => {
    if (!job || downloaded.current.has(job.id)) return;
    if (job.status === 'done') {
      downloaded.current.add(job.id);
      notify({ id: `export-${job.id}`, color: 'green', message: t('export.status.done') });
      void download(job.id, job.fileName ?? `export-${job.id}`);
    } else if (job.status === 'failed') {
      downloaded.current.add(job.id);
      notify({
        id: `export-${job.id}`,
        color: 'red',
        title: t('msg.exportFailed'),
        message: job.error ? translateServerMessage(job.error) : t('msg.exportFailed'),
      });
    }
  }, [job, download, t]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setFailure(null);
    const found = validateExport(form, tz);
    const range = exportRange(form.from, form.to, tz);
    if (hasErrors(found) || !range || !form.format) return;
    const body: ExportRequest = {
      deviceIds,
      params: form.mode === 'all' ? 'all' : [...form.params],
      from: new Date(range.from).toISOString(),
      to: new Date(range.to).toISOString(),
      format: form.format,
      ...(form.fileName.trim() ? { fileName: form.fileName.trim() } : {}),
    };
    try {
      const accepted = await create.mutateAsync(body);
      setJob(scheduled(accepted.id));
      notify({ id: `export-${accepted.id}`, color: 'blue', message: t('msg.exportScheduled') });
    } catch (err) {
      const refusal =
        err instanceof ApiError
          ? exportRefusal(err)
          : { kind: 'failed' as const, detail: err instanceof Error ? err.message : String(err) };
      if (refusal.kind === 'unavailable') setFailure(t('msg.exportUnavailable'));
      else if (refusal.kind === 'fields') setServer(refusal.errors);
      else setFailure(`${t('msg.exportFailed')} ${translateServerMessage(refusal.detail)}`);
    }
  };

  const restart = () => {
    setJob(null);
    setTouched(false);
    setServer({});
    setFailure(null);
  };

  // The caller's current selection (analytics passes what is on its chart) is taken up at each opening.
  const open = () => {
    if (!job && params && params.length > 0) setForm((f) => ({ ...f, mode: 'selected', params }));
    setOpened(true);
  };

  const running = job !== null && !isTerminal(job.status);
  // Below the mobile breakpoint (docs/spec.md §9: 576 px) the dialog takes the whole screen.
  const mobile = useMediaQuery('(max-width: 36em)') ?? false;

  return (
    <>
      <Button size="xs" variant="light" onClick={open} data-testid="export-button">
        {t('export.button')}
      </Button>
      <Modal
        opened={opened}
        onClose={() => setOpened(false)}
        title={t('export.title')}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        size="lg"
        fullScreen={mobile}
        data-testid="export-dialog"
      >
        {job ? (
          <Stack gap="sm" data-testid="export-job">
            <Text size="sm" data-testid="export-status" aria-live="polite">
              {job.status === 'queued'
                ? t('export.status.queued')
                : job.status === 'running'
                  ? t('export.status.running', { percent: percent(job) })
                  : job.status === 'done'
                    ? t('export.status.done')
                    : t('msg.exportFailed')}
            </Text>
            <Progress
              value={percent(job)}
              aria-label={t('export.progress')}
              color={job.status === 'failed' ? 'red' : job.status === 'done' ? 'green' : undefined}
              striped={running}
              animated={running}
              data-testid="export-progress"
              data-status={job.status}
            />
            {job.status === 'failed' && job.error && (
              <Alert color="red" variant="light">
                {translateServerMessage(job.error)}
              </Alert>
            )}
            <Group justify="flex-end">
              {job.status === 'done' && (
                <Button
                  onClick={() => void download(job.id, job.fileName ?? `export-${job.id}`)}
                  loading={downloading}
                  data-testid="export-download"
                >
                  {t('export.download')}
                </Button>
              )}
              <Button variant="default" onClick={restart} disabled={running}>
                {t('export.again')}
              </Button>
            </Group>
          </Stack>
        ) : (
          <form onSubmit={(e) => void submit(e)} noValidate data-testid="export-form">
            <Stack gap="sm">
              {deviceIds.length > 1 && (
                <Text size="sm" c="dimmed">
                  {t('export.devices', { count: deviceIds.length })}
                </Text>
              )}
              <Radio.Group
                label={t('export.format')}
                value={form.format ?? ''}
                onChange={(v) => set('format', v === 'csv' || v === 'pdf' ? v : null)}
                error={errors.format ? t(errors.format) : undefined}
                withAsterisk
              >
                <Group mt={4}>
                  <Radio value="csv" label={t('export.format.csv')} data-testid="export-format-csv" />
                  <Radio value="pdf" label={t('export.format.pdf')} data-testid="export-format-pdf" />
                </Group>
              </Radio.Group>
              <Radio.Group
                label={t('export.params')}
                value={form.mode}
                onChange={(v) => set('mode', v === 'selected' ? 'selected' : 'all')}
              >
                <Group mt={4}>
                  <Radio value="all" label={t('export.params.all')} data-testid="export-params-all" />
                  <Radio
                    value="selected"
                    label={t('export.params.selected')}
                    data-testid="export-params-selected"
                  />
                </Group>
              </Radio.Group>
              {form.mode === 'selected' && (
                <MultiSelect
                  label={t('export.params.pick')}
                  data={paramSelectData(t, options)}
                  value={[...form.params]}
                  onChange={(v) => set('params', v)}
                  searchable
                  clearable
                  error={errors.params ? t(errors.params) : undefined}
                  data-testid="export-params"
                />
              )}
              {form.mode === 'all' && errors.params && (
                <Text size="xs" c="var(--mantine-color-error)">
                  {t(errors.params)}
                </Text>
              )}
              <Group grow align="flex-start" wrap="wrap">
                <DateField
                  label={t('export.from')}
                  value={form.from}
                  onChange={(day) => set('from', day)}
                  error={errors.range ? t(errors.range) : undefined}
                  withAsterisk
                  clearable
                  testId="export-from"
                />
                <DateField
                  label={t('export.to')}
                  value={form.to}
                  onChange={(day) => set('to', day)}
                  error={errors.range ? true : undefined}
                  withAsterisk
                  clearable
                  testId="export-to"
                />
              </Group>
              <TextInput
                label={t('export.fileName')}
                description={t('export.fileName.hint')}
                value={form.fileName}
                maxLength={120}
                onChange={(e) => set('fileName', e.currentTarget.value)}
                data-testid="export-filename"
              />
              {failure && (
                <Alert color="red.9" variant="light" data-testid="export-failure">
                  {failure}
                </Alert>
              )}
              <Group justify="flex-end">
                <Button variant="default" onClick={() => setOpened(false)}>
                  {t('common.cancel')}
                </Button>
                <Button type="submit" loading={create.isPending} data-testid="export-submit">
                  {t('export.submit')}
                </Button>
              </Group>
            </Stack>
          </form>
        )}
      </Modal>
    </>
  );
}
