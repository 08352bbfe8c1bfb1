import type { EnergyTriple } from '@kilowatch/core';
import { Card, Group, Loader, SimpleGrid, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useMemo } from 'react';
import { useEnergy } from '../../api/telemetry/get-energy.ts';
import { useEnergySummary } from '../../api/telemetry/get-energy-summary.ts';
import { buildChartData, buildChartOptions, formatValue, type SeriesSpec } from '../../charts/options.ts';
import { ENERGY_COLORS } from '../../charts/palette.ts';
import { useChartTheme } from '../../charts/useChartTheme.ts';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { type ChartIntervalChoice, energyIntervalFor, type TimeRange } from '../../ranges/ranges.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { CHART_HEIGHT, ChartBody } from './ChartBody.tsx';

function SummaryCard({
  title,
  value,
  unit,
}: {
  title: MessageId;
  value: EnergyTriple | null | undefined;
  unit: string;
}) {
  const { t } = useT();
  return (
    <Card withBorder padding="sm" data-testid={`energy-${title}`}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        {t(title)}
      </Text>
      <Text fz="xl" fw={700}>
        {formatValue(value?.import ?? null, unit)}
      </Text>
      <Group gap="xs">
        <Text size="xs" c="dimmed">
          {t('details.export')}: {formatValue(value?.export ?? null, unit)}
        </Text>
        <Text size="xs" c="dimmed">
          {t('details.balance')}: {formatValue(value?.balance ?? null, unit)}
        </Text>
      </Group>
    </Card>
  );
}

export function EnergySummaryCards({ deviceId }: { deviceId: string }) {
  const { t } = useT();
  const summary = useEnergySummary(deviceId);
  if (summary.isPending) {
    return (
      <SimpleGrid cols={{ base: 2, sm: 4 }}>
        {[0, 1, 2, 3].map((i) => (
          <Skeleton key={i} height={84} />
        ))}
      </SimpleGrid>
    );
  }
  if (summary.isError) return <ErrorState error={summary.error} onRetry={() => void summary.refetch()} />;
  const s = summary.data;
  if (s.historyLoading) {
    return (
      <Card withBorder padding="sm" data-testid="energy-history-loading">
        <Group gap="sm">
          <Loader size="sm" />
          <Text>{t('details.historyLoading')}</Text>
        </Group>
      </Card>
    );
  }
  return (
    <SimpleGrid cols={{ base: 2, sm: s.billing ? 5 : 4 }}>
      <SummaryCard title="details.today" value={s.today} unit={s.unit} />
      <SummaryCard title="details.thisMonth" value={s.month} unit={s.unit} />
      <SummaryCard title="details.thisYear" value={s.year} unit={s.unit} />
      <SummaryCard title="details.total" value={s.total} unit={s.unit} />
      {s.billing && <SummaryCard title="details.billing" value={s.billing} unit={s.unit} />}
    </SimpleGrid>
  );
}

export function EnergyChart(props: {
  deviceId: string;
  range: TimeRange;
  interval: ChartIntervalChoice;
  tz: string;
  table: boolean;
  syncKey: string;
}) {
  const { t } = useT();
  const theme = useChartTheme();
  const interval = energyIntervalFor(props.range, props.interval);
  const energy = useEnergy(props.deviceId, { ...props.range, interval });
  const specs = useMemo<SeriesSpec[]>(
    () => [
      { param: 'import', label: t('details.import'), unit: 'kWh', color: ENERGY_COLORS.import, bars: true },
      {
        param: 'export',
        label: t('details.export'),
        unit: 'kWh',
        color: ENERGY_COLORS.export,
        bars: true,
        scale: -1,
      },
      { param: 'balance', label: t('details.balance'), unit: 'kWh', color: ENERGY_COLORS.balance },
    ],
    [t],
  );
  const options = useMemo(
    () =>
      buildChartOptions({
        specs,
        tz: props.tz,
        theme,
        width: 600,
        height: CHART_HEIGHT,
        barMs: 1,
        labels: { min: t('details.min'), max: t('details.max'), time: t('col.time') },
        syncKey: `${props.syncKey}-energy`,
      }),
    [specs, props.tz, props.syncKey, theme, t],
  );
  const data = useMemo(() => {
    const d = energy.data;
    // Another range's bars are never shown as this one's: the loading cue stands in meanwhile.
    if (!d || energy.isPlaceholderData) return null;
    return buildChartData(
      {
        t: d.t,
        series: { import: { avg: d.import }, export: { avg: d.export }, balance: { avg: d.balance } },
      },
      specs,
    );
  }, [energy.data, energy.isPlaceholderData, specs]);
  const title = t('details.energy');
  return (
    <Card withBorder padding="sm" data-testid="chart-energy">
      <Title order={2} fz="md" mb={4}>
        {title}
      </Title>
      <ChartBody
        title={title}
        data={data}
        error={energy.isError ? energy.error : null}
        onRetry={() => void energy.refetch()}
        specs={specs}
        options={options}
        theme={theme}
        tz={props.tz}
        table={props.table}
      />
    </Card>
  );
}

export function EnergySection(props: Parameters<typeof EnergyChart>[0]) {
  return (
    <Stack gap="sm">
      <EnergySummaryCards deviceId={props.deviceId} />
      <EnergyChart {...props} />
    </Stack>
  );
}
