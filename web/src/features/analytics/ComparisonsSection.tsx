import type { Device } from '@kilowatch/core';
import {
  Alert,
  Button,
  Card,
  Group,
  Loader,
  Modal,
  SegmentedControl,
  Skeleton,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import {
  type Comparison,
  type ComparisonRequest,
  useComparisons,
  useDeleteComparison,
  useSaveComparison,
} from '../../api/analytics/comparisons.ts';
import { useComparisonData } from '../../api/analytics/get-comparison-data.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { usePlotPoints } from '../../charts/plotPoints.ts';
import { useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { useLongRange } from '../../ranges/RangeControl.tsx';
import { wantsBands } from '../../ranges/ranges.ts';
import { paramName } from '../../shared/devices/paramNames.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { ComparisonCharts } from './ComparisonChart.tsx';
import { ComparisonForm } from './ComparisonForm.tsx';
import { useAnalyticsSearch } from './useAnalyticsSearch.ts';

function ComparisonView({ comparison }: { comparison: Comparison }) {
  const { t } = useT();
  const tz = displayTimeZone();
  const { range, control } = useLongRange(tz, 'week');
  const [grouped, setGrouped] = useState(comparison.grouped);
  // A saved change of the switch shows the saved view.
  useEffect(() => setGrouped(comparison.grouped), [comparison.grouped]);
  const version = JSON.stringify(comparison.members);
  // The card's width (a chart is at most that wide) sizes the answer to the screen.
  const plot = usePlotPoints<HTMLDivElement>();
  const { measured, points } = plot;
  const query = useMemo(
    () =>
      range && measured
        ? {
            ...range,
            bands: wantsBands(range),
            // Ranges of a week or less keep every bucket, as the device page's charts do.
            ...(points !== undefined && wantsBands(range) ? { points } : {}),
          }
        : null,
    [range, measured, points],
  );
  const data = useComparisonData(comparison.id, query, version);
  // Another range's data is never shown as this one's: a cue stands in while it loads.
  const loading = data.isFetching && (data.isPending || data.isPlaceholderData);

  return (
    <Card ref={plot.ref} withBorder padding="sm" data-testid="comparison-view">
      <Group justify="space-between" mb="sm" wrap="wrap">
        <Title order={2} fz="md" data-testid="comparison-title">
          {comparison.name}
        </Title>
        <Group gap="sm" wrap="wrap">
          {control}
          <SegmentedControl
            size="xs"
            aria-label={t('analytics.view')}
            value={grouped ? 'grouped' : 'separate'}
            onChange={(v) => setGrouped(v === 'grouped')}
            data={[
              { value: 'grouped', label: t('analytics.view.grouped') },
              { value: 'separate', label: t('analytics.view.separate') },
            ]}
            data-testid="comparison-view-switch"
          />
        </Group>
      </Group>
      {!range ? (
        <Alert color="gray">{t('val.dateRange')}</Alert>
      ) : data.isError ? (
        <ErrorState error={data.error} onRetry={() => void data.refetch()} />
      ) : loading || !data.data ? (
        <Stack
          gap="xs"
          role="status"
          aria-busy="true"
          aria-label={t('common.loading')}
          data-testid="comparison-loading"
        >
          <Group gap="xs">
            <Loader size="xs" />
            <Text size="sm" c="dimmed">
              {t('common.loading')}
            </Text>
          </Group>
          <Skeleton height={240} />
        </Stack>
      ) : (
        <div data-interval={data.data.interval} data-testid="comparison-data">
          <ComparisonCharts data={data.data} grouped={grouped} tz={tz} name={comparison.name} />
        </div>
      )}
    </Card>
  );
}

export function ComparisonsSection({
  devices,
  exportSlot,
}: {
  devices: readonly Device[];
  exportSlot?: (deviceIds: number[], params: string[]) => ReactNode;
}) {
  const { t } = useT();
  const list = useComparisons();
  const save = useSaveComparison();
  const remove = useDeleteComparison();
  const [search, setSearch] = useAnalyticsSearch();
  const [editing, setEditing] = useState<Comparison | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Comparison | null>(null);
  const selected = list.data?.find((c) => String(c.id) === search.cmp) ?? null;
  const nameOf = (id: number) => devices.find((d) => Number(d.id) === id)?.name ?? String(id);

  const onSave = async (body: ComparisonRequest) => {
    try {
      const saved = await save.mutateAsync({
        id: editing === 'new' || !editing ? undefined : editing.id,
        body,
      });
      notify({ color: 'green', message: t('msg.saved') });
      setEditing(null);
      setSearch({ cmp: String(saved.id) });
    } catch (err) {
      notify({ color: 'red', message: t('msg.saveFailed') });
      throw err;
    }
  };
  const onDelete = async () => {
    if (!deleting) return;
    try {
      await remove.mutateAsync(deleting.id);
      notify({ color: 'green', message: t('analytics.deleted') });
      if (search.cmp === String(deleting.id)) setSearch({ cmp: undefined });
      setDeleting(null);
    } catch {
      notify({ color: 'red', message: t('analytics.deleteFailed') });
    }
  };

  return (
    <Stack gap="md">
      <Card withBorder padding="sm">
        <Group justify="space-between" mb="sm" wrap="wrap">
          <Title order={2} fz="md">
            {t('analytics.savedComparisons')}
          </Title>
          <Button size="xs" onClick={() => setEditing('new')} data-testid="new-comparison">
            {t('analytics.newComparison')}
          </Button>
        </Group>
        {list.isError && list.data === undefined ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} />
        ) : list.isPending ? (
          <Loader m="md" role="status" aria-label={t('common.loading')} />
        ) : list.data.length === 0 ? (
          <Alert color="gray" data-testid="comparisons-empty">
            {t('analytics.noComparisons')}
          </Alert>
        ) : (
          <section
            style={{ overflowX: 'auto' }}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
            tabIndex={0}
            aria-label={t('analytics.savedComparisons')}
          >
            <Table fz="sm" data-testid="comparisons-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('col.name')}</Table.Th>
                  <Table.Th>{t('analytics.members')}</Table.Th>
                  <Table.Th>{t('col.actions')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.data.map((c) => (
                  <Table.Tr
                    key={c.id}
                    data-testid="comparison-row"
                    bg={selected?.id === c.id ? 'var(--mantine-primary-color-light)' : undefined}
                  >
                    <Table.Td>{c.name}</Table.Td>
                    <Table.Td>
                      <Text size="xs">
                        {c.members.map((m) => `${nameOf(m.deviceId)} · ${paramName(t, m.param)}`).join(', ')}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Group gap={4} wrap="nowrap">
                        <Button
                          size="compact-xs"
                          variant="light"
                          onClick={() => setSearch({ cmp: String(c.id) })}
                        >
                          {t('analytics.show')}
                        </Button>
                        <Button size="compact-xs" variant="default" onClick={() => setEditing(c)}>
                          {t('action.edit')}
                        </Button>
                        <Button size="compact-xs" variant="light" color="red" onClick={() => setDeleting(c)}>
                          {t('common.delete')}
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </section>
        )}
      </Card>
      {selected && (
        <>
          {exportSlot && (
            <Group justify="flex-end">
              {exportSlot(
                [...new Set(selected.members.map((m) => m.deviceId))],
                [...new Set(selected.members.map((m) => m.param))],
              )}
            </Group>
          )}
          <ComparisonView key={selected.id} comparison={selected} />
        </>
      )}
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing === 'new' ? t('analytics.newComparison') : t('analytics.editComparison')}
        size="lg"
        centered
        closeButtonProps={{ 'aria-label': t('common.close') }}
      >
        {editing !== null && (
          <ComparisonForm
            key={editing === 'new' ? 'new' : editing.id}
            initial={editing === 'new' ? null : editing}
            devices={devices}
            saving={save.isPending}
            onSave={onSave}
            onCancel={() => setEditing(null)}
          />
        )}
      </Modal>
      <Modal
        opened={deleting !== null}
        onClose={() => setDeleting(null)}
        title={t('analytics.deleteComparison')}
        centered
        closeButtonProps={{ 'aria-label': t('common.close') }}
      >
        <Stack>
          <Text>{t('analytics.deleteConfirm', { name: deleting?.name ?? '' })}</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDeleting(null)}>
              {t('common.cancel')}
            </Button>
            <Button color="red" onClick={onDelete} loading={remove.isPending} data-testid="confirm-delete">
              {t('common.delete')}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
