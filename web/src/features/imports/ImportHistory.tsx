/** The device's past imports, newest first, each with an Undo while it can be undone. */
import type { ImportJob } from '@kilowatch/core';
import { Alert, Badge, Button, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useUndoImport } from '../../api/imports/undo-import.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { notifyOutcome } from '../../lib/notify.ts';
import { formatInstant } from '../../lib/time.ts';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';
import { importMessage } from './importMessages.ts';

const STATE_COLORS: Record<ImportJob['state'], string> = {
  running: 'blue',
  done: 'green',
  failed: 'red',
  undoing: 'yellow',
  undone: 'gray',
};

export function ImportHistory({ jobs }: { jobs: readonly ImportJob[] }) {
  const { t, locale } = useT();
  const tz = displayTimeZone();
  const undo = useUndoImport();
  const [refusal, setRefusal] = useState<string | null>(null);
  const run = (job: ImportJob) => {
    setRefusal(null);
    undo.mutate(job.id, {
      onSuccess: () => notifyOutcome('import-undo', true, t('imports.undo.done')),
      onError: (e) =>
        setRefusal(
          e instanceof ApiError ? importMessage(t, translateServerMessage, e.message) : t('msg.internal'),
        ),
    });
  };
  return (
    <Stack gap="xs" data-testid="import-history">
      <Title order={2} fz="h3">
        {t('imports.history.title')}
      </Title>
      {refusal && (
        <Alert color="red" role="alert" data-testid="import-undo-refused">
          {refusal}
        </Alert>
      )}
      {jobs.length === 0 ? (
        <Text c="dimmed" size="sm" data-testid="import-history-empty">
          {t('imports.history.empty')}
        </Text>
      ) : (
        <ScrollTable minWidth={560} label={t('imports.history.title')}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('imports.history.started')}</Table.Th>
                <Table.Th>{t('imports.history.format')}</Table.Th>
                <Table.Th>{t('imports.history.state')}</Table.Th>
                <Table.Th>{t('imports.history.counts')}</Table.Th>
                <Table.Th>{t('imports.history.actions')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {jobs.map((job) => {
                const when = formatInstant(job.startedAt, tz, locale);
                const busy = undo.isPending && undo.variables === job.id;
                return (
                  <Table.Tr key={job.id} data-testid="import-row" data-id={job.id} data-state={job.state}>
                    <Table.Td>{when}</Table.Td>
                    <Table.Td>{t(`imports.format.${job.format}`)}</Table.Td>
                    <Table.Td>
                      <Badge color={STATE_COLORS[job.state]} variant="light" data-testid="import-row-state">
                        {t(`imports.state.${job.state}`)}
                      </Badge>
                    </Table.Td>
                    <Table.Td>
                      {t('imports.history.countsValue', {
                        accepted: job.accepted.toLocaleString(locale),
                        rows: job.rowsRead.toLocaleString(locale),
                      })}
                    </Table.Td>
                    <Table.Td>
                      {job.state !== 'undone' && (
                        <Button
                          size="xs"
                          variant="light"
                          color="red"
                          loading={busy}
                          disabled={job.state === 'running' || job.state === 'undoing'}
                          onClick={() => run(job)}
                          aria-label={t('imports.undo.label', { when })}
                          data-testid="import-undo"
                        >
                          {t('imports.undo')}
                        </Button>
                      )}
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Stack>
  );
}
