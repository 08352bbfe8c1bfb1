import type { Device } from '@kilowatch/core';
import { Alert, Card, Group, Loader, MultiSelect, SegmentedControl, Stack, Table, Text } from '@mantine/core';
import { type ReactNode, useMemo } from 'react';
import { type ConsumptionInterval, useConsumption } from '../../api/analytics/get-consumption.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { useT } from '../../i18n/i18n.ts';
import { DateField } from '../../ranges/DateField.tsx';
import { todayIn } from '../../ranges/RangeControl.tsx';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import {
  buildConsumptionTable,
  formatKwh,
  periodLabel,
  TABLE_MAX_DAYS,
  tableRangeTooLong,
} from './consumptionTable.ts';
import { lastDays, rangeOfDays } from './dates.ts';
import { useAnalyticsSearch } from './useAnalyticsSearch.ts';

export function selectedDeviceIds(
  search: { devices?: string | undefined },
  devices: readonly Device[],
): number[] {
  const own = new Set(devices.map((d) => Number(d.id)));
  return (search.devices ?? '')
    .split(',')
    .filter(Boolean)
    .map(Number)
    .filter((id) => own.has(id));
}

export function ConsumptionSection({
  devices,
  exportSlot,
}: {
  devices: readonly Device[];
  exportSlot?: (deviceIds: number[]) => ReactNode;
}) {
  const { t, locale } = useT();
  const tz = displayTimeZone();
  const [search, setSearch] = useAnalyticsSearch();
  const ids = selectedDeviceIds(search, devices);
  const interval: ConsumptionInterval = search.interval ?? '1d';
  const today = todayIn(tz);
  const defaults = useMemo(() => lastDays(30, tz), [tz]);
  const days = { from: search.cfrom ?? defaults.from, to: search.cto ?? defaults.to };
  const range = rangeOfDays(days, tz);
  const idsKey = ids.join(',');
  const query = useMemo(
    () => ({
      deviceIds: idsKey ? idsKey.split(',').map(Number) : [],
      from: range?.from ?? 0,
      to: range?.to ?? 0,
      interval,
    }),
    [idsKey, range?.from, range?.to, interval],
  );
  const tooLong = range !== null && tableRangeTooLong(range, interval);
  const consumption = useConsumption(query, ids.length > 0 && range !== null && !tooLong);
  const table = useMemo(
    () =>
      consumption.data
        ? buildConsumptionTable(consumption.data.rows, query.deviceIds, interval, {
            from: days.from,
            to: days.to,
          })
        : null,
    [consumption.data, query.deviceIds, interval, days.from, days.to],
  );
  const nameOf = (id: number) => devices.find((d) => Number(d.id) === id)?.name ?? String(id);

  return (
    <Stack gap="md">
      <Card withBorder padding="sm">
        <Group align="flex-start" wrap="wrap">
          <MultiSelect
            label={t('analytics.devices')}
            data={devices.map((d) => ({ value: String(d.id), label: d.name }))}
            value={ids.map(String)}
            onChange={(v) => setSearch({ devices: v.join(',') || undefined })}
            searchable
            clearable
            w={{ base: '100%', sm: 360 }}
            data-testid="consumption-devices"
          />
          <DateField
            label={t('analytics.from')}
            value={days.from}
            onChange={(cfrom) => setSearch({ cfrom })}
            error={range ? undefined : t('val.dateRange')}
            maxDate={today}
            testId="consumption-from"
          />
          <DateField
            label={t('analytics.to')}
            value={days.to}
            onChange={(cto) => setSearch({ cto })}
            maxDate={today}
            testId="consumption-to"
          />
        </Group>
        <Group mt="sm" justify="space-between" wrap="wrap">
          <Stack gap={4}>
            <Text size="sm" fw={500} id="consumption-interval-label">
              {t('analytics.interval')}
            </Text>
            <SegmentedControl
              aria-labelledby="consumption-interval-label"
              value={interval}
              onChange={(v) => setSearch({ interval: v as ConsumptionInterval })}
              data={[
                { value: '1d', label: t('analytics.interval.day') },
                { value: '1mo', label: t('analytics.interval.month') },
              ]}
              data-testid="consumption-interval"
            />
          </Stack>
          {ids.length > 0 && exportSlot?.(ids)}
        </Group>
      </Card>
      <Card withBorder padding="sm">
        {ids.length === 0 ? (
          <Alert color="gray" data-testid="consumption-pick">
            {t('analytics.pickDevices')}
          </Alert>
        ) : !range ? (
          <Alert color="gray">{t('val.dateRange')}</Alert>
        ) : tooLong ? (
          <Alert color="orange" data-testid="consumption-too-long">
            {interval === '1mo'
              ? t('analytics.tableTooLong.month', { max: TABLE_MAX_DAYS['1mo'] / 366 })
              : t('analytics.tableTooLong.day', { max: TABLE_MAX_DAYS['1d'] })}
          </Alert>
        ) : consumption.isError ? (
          <ErrorState error={consumption.error} onRetry={() => void consumption.refetch()} />
        ) : consumption.isPending || !table ? (
          <Loader m="md" role="status" aria-label={t('common.loading')} />
        ) : table.rows.length === 0 ? (
          <Text c="dimmed" ta="center" py="lg" data-testid="consumption-empty">
            {t('common.empty')}
          </Text>
        ) : (
          <section
            style={{ overflowX: 'auto', maxHeight: '70vh', overflowY: 'auto' }}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
            tabIndex={0}
            aria-label={t('analytics.consumption')}
          >
            <Table
              striped
              stickyHeader
              fz="xs"
              data-testid="consumption-table"
              miw={200 + 240 * table.deviceIds.length}
            >
              <Table.Caption>
                {t('analytics.consumptionCaption', {
                  unit: 'kWh',
                  tz,
                  period: t(
                    interval === '1mo'
                      ? 'analytics.consumptionPeriod.month'
                      : 'analytics.consumptionPeriod.day',
                  ),
                  periods: t(
                    interval === '1mo'
                      ? 'analytics.consumptionPeriods.month'
                      : 'analytics.consumptionPeriods.day',
                  ),
                })}
              </Table.Caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th rowSpan={2}>
                    {t(interval === '1mo' ? 'analytics.interval.month' : 'analytics.interval.day')}
                  </Table.Th>
                  {table.deviceIds.map((id, i) => (
                    <Table.Th key={id} colSpan={3} ta="center" data-testid={`consumption-device-${id}`}>
                      {nameOf(id)}
                      {table.zones[i] && (
                        <Text component="span" display="block" size="xs" fw={400} c="dimmed">
                          {t('analytics.zoneOf', { tz: table.zones[i] })}
                        </Text>
                      )}
                    </Table.Th>
                  ))}
                </Table.Tr>
                <Table.Tr>
                  {table.deviceIds.flatMap((id) => [
                    <Table.Th key={`${id}-i`} ta="right">
                      {t('details.import')} (kWh)
                    </Table.Th>,
                    <Table.Th key={`${id}-e`} ta="right">
                      {t('details.export')} (kWh)
                    </Table.Th>,
                    <Table.Th key={`${id}-b`} ta="right">
                      {t('details.balance')} (kWh)
                    </Table.Th>,
                  ])}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {table.rows.map((r) => (
                  <Table.Tr key={r.period} data-testid="consumption-row">
                    <Table.Td>{periodLabel(r.period, locale)}</Table.Td>
                    {table.deviceIds.flatMap((id, i) => [
                      <Table.Td key={`${id}-i`} ta="right">
                        {formatKwh(r.cells[i]?.import, locale)}
                      </Table.Td>,
                      <Table.Td key={`${id}-e`} ta="right">
                        {formatKwh(r.cells[i]?.export, locale)}
                      </Table.Td>,
                      <Table.Td key={`${id}-b`} ta="right">
                        {formatKwh(r.cells[i]?.balance, locale)}
                      </Table.Td>,
                    ])}
                  </Table.Tr>
                ))}
              </Table.Tbody>
              <Table.Tfoot>
                <Table.Tr data-testid="consumption-totals" fw={700}>
                  <Table.Th scope="row">{t('analytics.total')}</Table.Th>
                  {table.deviceIds.flatMap((id, i) => [
                    <Table.Td key={`${id}-i`} ta="right" data-testid={`total-${id}-import`}>
                      {formatKwh(table.totals[i]?.import, locale)}
                    </Table.Td>,
                    <Table.Td key={`${id}-e`} ta="right" data-testid={`total-${id}-export`}>
                      {formatKwh(table.totals[i]?.export, locale)}
                    </Table.Td>,
                    <Table.Td key={`${id}-b`} ta="right" data-testid={`total-${id}-balance`}>
                      {formatKwh(table.totals[i]?.balance, locale)}
                    </Table.Td>,
                  ])}
                </Table.Tr>
              </Table.Tfoot>
            </Table>
          </section>
        )}
      </Card>
    </Stack>
  );
}
