import type { SeriesBlock } from '@kilowatch/core';
import { Card, Group, Text, Title } from '@mantine/core';
import { useMemo } from 'react';
import { buildChartData, buildChartOptions, type LimitLines, type SeriesSpec } from '../../charts/options.ts';
import { useChartTheme } from '../../charts/useChartTheme.ts';
import { useT } from '../../i18n/i18n.ts';
import { CHART_INTERVALS, type ChartInterval } from '../../ranges/ranges.ts';
import { paramName } from '../../shared/devices/paramNames.ts';
import { CHART_HEIGHT, ChartBody } from './ChartBody.tsx';
import type { ChartGroup } from './chartGroups.ts';

export { CHART_HEIGHT };

/** The interval of an answer in words ("1 hour"); raw readings as they are. */
export function intervalLabel(t: ReturnType<typeof useT>['t'], interval: string): string {
  return (CHART_INTERVALS as readonly string[]).includes(interval)
    ? t(`details.int.${interval as ChartInterval}`)
    : t('details.int.raw');
}

export function useGroupSpecs(group: ChartGroup): SeriesSpec[] {
  const { t } = useT();
  return useMemo(
    () =>
      group.specs.map((s, i) => {
        const l = group.labels[i];
        // Phases by number (L1); the phases summed as such; any other series by its catalogue name
        // ("Temperature", "Set temperature", "DC voltage 2"), never by a position number.
        const label = !l
          ? paramName(t, s.param)
          : 'phase' in l
            ? t('details.phase', { phase: l.phase })
            : l.id === 'details.all'
              ? t(l.id)
              : paramName(t, s.param);
        return { ...s, label };
      }),
    [group, t],
  );
}

export function SeriesChart(props: {
  group: ChartGroup;
  data: SeriesBlock | undefined;
  isPending: boolean;
  error: unknown;
  refetch: () => void;
  tz: string;
  limits?: LimitLines;
  table: boolean;
  syncKey: string;
}) {
  const { t } = useT();
  const theme = useChartTheme();
  const specs = useGroupSpecs(props.group);
  const title = t(props.group.title);
  const options = useMemo(
    () =>
      buildChartOptions({
        specs,
        tz: props.tz,
        theme,
        width: 600,
        height: CHART_HEIGHT,
        syncKey: props.syncKey,
        limits: props.limits,
        labels: { min: t('details.min'), max: t('details.max'), time: t('col.time') },
      }),
    [specs, props.tz, props.syncKey, props.limits, t, theme],
  );
  const data = useMemo(() => (props.data ? buildChartData(props.data, specs) : null), [props.data, specs]);

  return (
    <Card withBorder padding="sm" data-testid={`chart-${props.group.id}`}>
      <Group justify="space-between" mb={4}>
        <Title order={2} fz="md">
          {title}
        </Title>
        {props.data?.interval && !props.isPending && (
          <Text size="xs" c="dimmed" data-testid="chart-interval" data-interval={props.data.interval}>
            {intervalLabel(t, props.data.interval)}
          </Text>
        )}
      </Group>
      <ChartBody
        title={title}
        data={props.isPending ? null : data}
        error={props.error}
        onRetry={props.refetch}
        specs={specs}
        options={options}
        theme={theme}
        tz={props.tz}
        table={props.table}
      />
    </Card>
  );
}
