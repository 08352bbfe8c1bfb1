/** The preview: the file's first rows as its columns, and the readings those rows give. */
import { Alert, Stack, Table, Text, Title } from '@mantine/core';
import { displayTimeZone } from '../../auth/session.ts';
import { useT } from '../../i18n/i18n.ts';
import { formatInstant, instantColumnStyle } from '../../lib/time.ts';
import { paramLabel } from '../../shared/devices/paramNames.ts';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';
import type { PreviewTable } from './filePreview.ts';
import type { ParsedPreview } from './parsedPreview.ts';

export function FilePreview({ table }: { table: PreviewTable }) {
  const { t } = useT();
  return (
    <Stack gap={4}>
      <Title order={2} fz="h4">
        {t('imports.preview.title')}
      </Title>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }} data-testid="import-columns">
        {t('imports.preview.columns')}: {table.columns.join(' · ')}
      </Text>
      <ScrollTable minWidth={Math.max(320, table.columns.length * 110)} label={t('imports.preview.file')}>
        <Table fz="xs" striped data-testid="import-preview-file">
          <Table.Thead>
            <Table.Tr>
              {table.columns.map((c, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a file may repeat a column name
                <Table.Th key={i}>{c}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {table.rows.map((r, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are the file's, in order
              <Table.Tr key={i} data-testid="import-preview-row">
                {r.map((c, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: cells are the row's, in order
                  <Table.Td key={j}>{c}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollTable>
    </Stack>
  );
}

export function ParsedPreviewTable({ preview }: { preview: ParsedPreview }) {
  const { t, locale } = useT();
  const tz = displayTimeZone();
  if (preview.problem)
    return (
      <Alert color="yellow" data-testid="import-preview-problem">
        {t('imports.preview.problem', { detail: preview.problem })}
      </Alert>
    );
  const style = instantColumnStyle(preview.readings.map((r) => r.ts));
  const number = new Intl.NumberFormat(locale, { maximumFractionDigits: 6 });
  return (
    <Stack gap={4}>
      <Text size="sm" fw={600}>
        {t('imports.preview.parsed')}
      </Text>
      {preview.readings.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="import-preview-none">
          {t('imports.preview.none')}
        </Text>
      ) : (
        <ScrollTable
          minWidth={Math.max(320, 160 + preview.params.length * 140)}
          label={t('imports.preview.parsed')}
        >
          <Table fz="xs" striped data-testid="import-preview-parsed">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('imports.preview.time')}</Table.Th>
                {preview.params.map((p) => (
                  <Table.Th key={p}>{paramLabel(t, p)}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {preview.readings.map((r) => (
                <Table.Tr key={r.ts} data-testid="import-parsed-row">
                  <Table.Td>{formatInstant(r.ts, tz, locale, style)}</Table.Td>
                  {preview.params.map((p) => (
                    <Table.Td key={p}>{r.values[p] === undefined ? '' : number.format(r.values[p])}</Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      {preview.errors.length > 0 && (
        <Alert color="yellow" title={t('imports.preview.rowErrors')} data-testid="import-preview-errors">
          {preview.errors.map((e) => (
            <Text key={`${e.line}-${e.column ?? ''}`} size="xs">
              {e.line}
              {e.column ? ` (${e.column})` : ''}: {e.reason}
            </Text>
          ))}
        </Alert>
      )}
    </Stack>
  );
}
