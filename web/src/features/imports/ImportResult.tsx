/** An import's counts, its first row errors and the link to all of them (errors.csv). */
import type { ImportJob } from '@kilowatch/core';
import { Alert, Button, Group, Progress, SimpleGrid, Stack, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { saveFile } from '../../api/exports/download-export.ts';
import { downloadImportErrors } from '../../api/imports/download-errors.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { formatInstant } from '../../lib/time.ts';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';
import { importMessage, percentRead } from './importMessages.ts';

/** Row errors shown on the screen; errors.csv has the rest. */
const ERRORS_SHOWN = 20;

export function ImportProgress({ job, size }: { job: ImportJob | null; size: number }) {
  const { t } = useT();
  const percent = job ? percentRead(job.bytesRead, size) : 0;
  const written = job !== null && job.bytesRead >= size;
  return (
    <Stack gap={4} data-testid="import-progress">
      <Progress value={percent} animated aria-label={t('imports.progress')} />
      <Text size="sm" c="dimmed" data-testid="import-progress-text">
        {job === null
          ? t('imports.progress.sending')
          : written
            ? t('imports.progress.finishing')
            : t('imports.progress.reading', { percent, rows: job.rowsRead })}
      </Text>
    </Stack>
  );
}

function Count({ label, value, testId }: { label: string; value: number; testId: string }) {
  const { locale } = useT();
  return (
    <Stack gap={0}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={600} data-testid={testId}>
        {value.toLocaleString(locale)}
      </Text>
    </Stack>
  );
}

export function ImportResult({ job }: { job: ImportJob }) {
  const { t, locale } = useT();
  const tz = displayTimeZone();
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const failed = job.state === 'failed';
  const title =
    job.state === 'undone'
      ? t('imports.result.undone')
      : failed
        ? t('imports.result.failed')
        : t('imports.result.done');
  const download = async () => {
    setDownloadError(null);
    try {
      saveFile(await downloadImportErrors(job.id));
    } catch (e) {
      setDownloadError(e instanceof ApiError ? translateServerMessage(e.message) : t('msg.internal'));
    }
  };
  return (
    <Alert
      color={failed ? 'red' : job.state === 'undone' ? 'gray' : 'green'}
      title={title}
      data-testid="import-result"
      data-state={job.state}
    >
      <Stack gap="sm">
        {job.failure && (
          <Text size="sm" data-testid="import-failure">
            {importMessage(t, translateServerMessage, job.failure)}
          </Text>
        )}
        <SimpleGrid cols={{ base: 2, xs: 3, sm: 5 }} spacing="sm">
          <Count label={t('imports.count.rows')} value={job.rowsRead} testId="import-count-rows" />
          <Count label={t('imports.count.accepted')} value={job.accepted} testId="import-count-accepted" />
          <Count
            label={t('imports.count.duplicates')}
            value={job.duplicates}
            testId="import-count-duplicates"
          />
          <Count label={t('imports.count.conflicts')} value={job.conflicts} testId="import-count-conflicts" />
          <Count label={t('imports.count.rejected')} value={job.rejected} testId="import-count-rejected" />
        </SimpleGrid>
        {job.range && (
          <Text size="sm" data-testid="import-range">
            {t('imports.range', {
              from: formatInstant(job.range.from, tz, locale),
              to: formatInstant(job.range.to, tz, locale),
            })}
          </Text>
        )}
        {job.errors.length > 0 && (
          <Stack gap={4}>
            <Text size="sm" fw={600}>
              {t('imports.errors.title')}
            </Text>
            <ScrollTable minWidth={360} label={t('imports.errors.title')}>
              <Table fz="xs" data-testid="import-errors">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>{t('imports.errors.line')}</Table.Th>
                    <Table.Th>{t('imports.errors.column')}</Table.Th>
                    <Table.Th>{t('imports.errors.reason')}</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {job.errors.slice(0, ERRORS_SHOWN).map((e) => (
                    <Table.Tr key={`${e.line}-${e.column ?? ''}-${e.reason}`}>
                      <Table.Td>{e.line}</Table.Td>
                      <Table.Td>{e.column ?? ''}</Table.Td>
                      <Table.Td>{e.reason}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </ScrollTable>
            <Group>
              <Button
                size="xs"
                variant="light"
                onClick={() => void download()}
                data-testid="import-errors-download"
              >
                {t('imports.errors.download')}
              </Button>
            </Group>
            {downloadError && (
              <Text size="sm" c="red" role="alert">
                {downloadError}
              </Text>
            )}
          </Stack>
        )}
      </Stack>
    </Alert>
  );
}
