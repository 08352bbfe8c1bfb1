import type { Device, Zone } from '@kilowatch/core';
import {
  Alert,
  Badge,
  Box,
  Card,
  Group,
  Select,
  SimpleGrid,
  Skeleton,
  Stack,
  Table,
  Text,
  Title,
  useComputedColorScheme,
} from '@mantine/core';
import { useParams } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { useDevices } from '../../api/devices/get-devices.ts';
import { type TariffComparison, useTariffComparison } from '../../api/tariffs/get-tariff-comparison.ts';
import {
  type TariffStats,
  type TariffStatsQuery,
  useTariffStats,
} from '../../api/tariffs/get-tariff-stats.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { formatMonth } from '../../lib/time.ts';
import { DateField } from '../../ranges/DateField.tsx';
import { formatKwh, formatMoney } from '../../shared/format/amounts.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';
import { ZONE_NAMES } from './ScheduleGrid.tsx';
import {
  costBars,
  type DateRangeInput,
  defaultStatsRange,
  rangeError,
  rangeQuery,
  rankGroups,
} from './statsView.ts';
import { ZONE_COLORS } from './zoneColors.ts';

const FIXED_COLOR = { light: '#ced4da', dark: '#5c5f66' } as const;

function SimulatedNote() {
  const { t } = useT();
  return (
    <Alert
      color="yellow"
      variant="light"
      title={t('places.simulatedTitle')}
      data-testid="simulated-label"
      styles={{ title: { color: 'var(--mantine-color-text)' } }}
    >
      <Text size="sm">{t('places.simulated')}</Text>
    </Alert>
  );
}

function zoneLabel(t: (id: MessageId, v?: Record<string, unknown>) => string, zone: number): string {
  return zone >= 1 && zone <= 3 ? t(ZONE_NAMES[zone as Zone]) : String(zone);
}

function StatsTable({ stats }: { stats: TariffStats }) {
  const { t, locale } = useT();
  const zones = [...new Set(stats.months.flatMap((m) => m.zones.map((z) => z.zone)))].sort();
  const money = (x: number) => formatMoney(x, stats.currency, locale);
  return (
    <ScrollTable minWidth={480 + zones.length * 160} label={t('places.stats.title')}>
      <Table striped data-testid="stats-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('places.stats.month')}</Table.Th>
            {zones.map((z) => (
              <Table.Th key={z}>{zoneLabel(t, z)}</Table.Th>
            ))}
            <Table.Th>{t('places.stats.fixed')}</Table.Th>
            <Table.Th>{t('places.stats.energy')}</Table.Th>
            <Table.Th>{t('places.stats.cost')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {stats.months.map((m) => (
            <Table.Tr key={m.month}>
              <Table.Th scope="row">{formatMonth(m.month, locale)}</Table.Th>
              {zones.map((z) => {
                const zc = m.zones.find((x) => x.zone === z);
                return (
                  <Table.Td key={z}>
                    {zc ? `${formatKwh(zc.energy, locale)} · ${money(zc.cost)}` : '—'}
                  </Table.Td>
                );
              })}
              <Table.Td>{money(m.fixed)}</Table.Td>
              <Table.Td>{formatKwh(m.energy, locale)}</Table.Td>
              <Table.Td fw={600}>{money(m.cost)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
        <Table.Tfoot>
          <Table.Tr>
            <Table.Th scope="row" colSpan={zones.length + 2}>
              {t('places.stats.total')}
            </Table.Th>
            <Table.Th data-testid="stats-total-energy">{formatKwh(stats.total.energy, locale)}</Table.Th>
            <Table.Th data-testid="stats-total-cost">{money(stats.total.cost)}</Table.Th>
          </Table.Tr>
        </Table.Tfoot>
      </Table>
    </ScrollTable>
  );
}

/** Stacked cost bars per month, drawn with plain boxes; the table carries the same numbers. */
function StatsBars({ stats }: { stats: TariffStats }) {
  const { t, locale } = useT();
  const scheme = useComputedColorScheme('light', { getInitialValueInEffect: false });
  const bars = costBars(stats.months);
  const keys = [...new Set(bars.flatMap((b) => b.segments.map((s) => s.key)))];
  const color = (k: number | 'fixed') =>
    k === 'fixed' ? FIXED_COLOR[scheme] : (ZONE_COLORS[scheme][k as Zone]?.bg ?? FIXED_COLOR[scheme]);
  const name = (k: number | 'fixed') => (k === 'fixed' ? t('places.stats.fixed') : zoneLabel(t, k));
  return (
    <Stack gap={6} data-testid="stats-bars" role="img" aria-label={t('places.stats.chart')}>
      {bars.map((b) => (
        <Group key={b.month} gap="xs" wrap="nowrap" align="center">
          <Text size="xs" w={64} style={{ flexShrink: 0 }}>
            {formatMonth(b.month, locale, 'shortMonth')}
          </Text>
          <Box style={{ flex: 1, display: 'flex', height: 18, minWidth: 0 }}>
            {b.segments.map((s) => (
              <Box
                key={String(s.key)}
                title={`${name(s.key)}: ${formatMoney(s.value, stats.currency, locale)}`}
                style={{ width: `${s.percent}%`, background: color(s.key), minWidth: s.percent > 0 ? 1 : 0 }}
              />
            ))}
          </Box>
          <Text size="xs" w={90} ta="right" style={{ flexShrink: 0 }}>
            {formatMoney(b.total, stats.currency, locale)}
          </Text>
        </Group>
      ))}
      <Group gap="md">
        {keys.map((k) => (
          <Group key={String(k)} gap={4}>
            <Box
              component="span"
              style={{
                display: 'inline-block',
                width: 12,
                height: 12,
                borderRadius: 2,
                background: color(k),
              }}
            />
            <Text size="xs">{name(k)}</Text>
          </Group>
        ))}
      </Group>
    </Stack>
  );
}

function Comparison({ data }: { data: TariffComparison }) {
  const { t, locale } = useT();
  const ranked = rankGroups(data.groups);
  const money = (x: number) => formatMoney(x, data.currency, locale);
  // The sentence above the table wraps in the card; inside the table's scroll box a phone would cut it.
  return (
    <Stack gap="xs">
      <Text size="sm" c="dimmed" id="comparison-caption" data-testid="comparison-caption">
        {t('places.compare.caption', { energy: formatKwh(data.energy, locale) })}
      </Text>
      {!data.dynamic.covered && data.dynamic.unpriced.length > 0 && (
        <Text size="sm" c="dimmed" data-testid="compare-dynamic-uncovered">
          {t('places.compare.dynamicUncovered', { count: data.dynamic.unpriced.length })}
        </Text>
      )}
      <ScrollTable minWidth={560} label={t('places.compare.title')}>
        <Table striped data-testid="comparison-table" aria-describedby="comparison-caption">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>#</Table.Th>
              <Table.Th>{t('places.tariff.group')}</Table.Th>
              <Table.Th>{t('places.stats.cost')}</Table.Th>
              <Table.Th>{t('places.compare.extra')}</Table.Th>
              <Table.Th>{t('places.tariff.prices')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {ranked.map((g) => (
              <Table.Tr key={g.group} data-testid="comparison-row" data-group={g.group}>
                <Table.Td>{g.rank}</Table.Td>
                <Table.Th scope="row">
                  <Group gap={6} wrap="nowrap">
                    <span>{g.group}</span>
                    {g.rank === 1 && (
                      <Badge size="xs" color="green" variant="filled">
                        {t('places.compare.cheapest')}
                      </Badge>
                    )}
                  </Group>
                </Table.Th>
                <Table.Td fw={600} data-cost={g.cost}>
                  {money(g.cost)}
                </Table.Td>
                <Table.Td>{g.extra > 0 ? `+${money(g.extra)}` : '—'}</Table.Td>
                <Table.Td>
                  <Text size="xs">
                    {g.group === 'G11'
                      ? money(g.prices.zone1)
                      : `${money(g.prices.zone1)} / ${money(g.prices.zone2)}`}{' '}
                    · {t('places.stats.fixed')} {money(g.prices.fixed)}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollTable>
    </Stack>
  );
}

function pickDevice(devices: readonly Device[], tariffId: string): string | null {
  const own = devices.find((d) => d.tariff && String(d.tariff.id) === tariffId);
  return own ? String(own.id) : devices[0] ? String(devices[0].id) : null;
}

export default function TariffStatsPage() {
  const { t } = useT();
  const { id } = useParams({ strict: false }) as { id: string };
  const tz = displayTimeZone();
  const devices = useDevices();
  const [chosen, setChosen] = useState<string | null>(null);
  const [range, setRange] = useState<DateRangeInput>(() => defaultStatsRange(Date.now(), tz));
  const deviceId = chosen ?? pickDevice(devices.data ?? [], id);
  const tariffName = devices.data?.find((d) => d.tariff && String(d.tariff.id) === id)?.tariff?.name;
  const error = rangeError(range);
  const query = useMemo<TariffStatsQuery | null>(() => {
    const r = rangeQuery(range, tz);
    return r && deviceId ? { deviceId, ...r } : null;
  }, [range, tz, deviceId]);
  const stats = useTariffStats(id, query);
  const compare = useTariffComparison(query);
  const deviceOptions = (devices.data ?? []).map((d) => ({ value: String(d.id), label: d.name }));

  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {t('page.tariffStats')}
        {tariffName ? `: ${tariffName}` : ''}
      </Title>
      <SimulatedNote />
      <Card withBorder>
        <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
          <Select
            label={t('places.stats.device')}
            data={deviceOptions}
            value={deviceId}
            onChange={(v) => v && setChosen(v)}
            allowDeselect={false}
            searchable
            disabled={devices.isPending}
            data-testid="stats-device"
          />
          <DateField
            label={t('log.from')}
            value={range.from}
            onChange={(from) => setRange((r) => ({ ...r, from }))}
            error={error ? t(error.id, error.values) : undefined}
            testId="stats-from"
          />
          <DateField
            label={t('log.to')}
            value={range.to}
            onChange={(to) => setRange((r) => ({ ...r, to }))}
            testId="stats-to"
          />
        </SimpleGrid>
      </Card>
      {devices.isError && <ErrorState error={devices.error} onRetry={() => void devices.refetch()} />}
      {devices.data && devices.data.length === 0 && (
        <Card withBorder>
          <Text c="dimmed">{t('places.stats.noDevices')}</Text>
        </Card>
      )}
      {query && (
        <>
          <Card withBorder>
            <Title order={2} fz="h4" mb="xs">
              {t('places.stats.title')}
              {stats.data ? ` · ${stats.data.group}` : ''}
            </Title>
            {stats.isPending ? (
              <Skeleton height={200} />
            ) : stats.isError ? (
              <ErrorState error={stats.error} onRetry={() => void stats.refetch()} />
            ) : stats.data.months.length === 0 ? (
              <Text c="dimmed">{t('common.empty')}</Text>
            ) : (
              <Stack gap="md">
                {stats.data.unpriced.length > 0 && (
                  <Alert color="yellow" variant="light" data-testid="stats-unpriced">
                    <Text size="sm">{t('places.stats.unpriced', { count: stats.data.unpriced.length })}</Text>
                  </Alert>
                )}
                <StatsBars stats={stats.data} />
                <StatsTable stats={stats.data} />
              </Stack>
            )}
          </Card>
          <Card withBorder>
            <Title order={2} fz="h4" mb="xs">
              {t('places.compare.title')}
            </Title>
            {compare.isPending ? (
              <Skeleton height={200} />
            ) : compare.isError ? (
              <ErrorState error={compare.error} onRetry={() => void compare.refetch()} />
            ) : (
              <Stack gap="xs">
                <Text
                  // A sentence in a badge's colours. Not a Badge: Mantine's keeps its label to one line in a
                  // grid cell as wide as the text, and at 390 px the Polish sentence ran out of the card.
                  component="div"
                  data-testid="compare-simulated"
                  bg="yellow.6"
                  c="black"
                  fz="xs"
                  fw={700}
                  tt="uppercase"
                  px="sm"
                  py={2}
                  style={{
                    alignSelf: 'flex-start',
                    maxWidth: '100%',
                    borderRadius: 'var(--mantine-radius-xl)',
                  }}
                >
                  {t('places.compare.simulated')}
                </Text>
                <Comparison data={compare.data} />
              </Stack>
            )}
          </Card>
        </>
      )}
    </Stack>
  );
}
