/** What a chart card shows under its title: the error, a skeleton, the empty note, the table view or the chart. */
import { Group, Loader, Skeleton, Stack, Text } from '@mantine/core';
import type uPlot from 'uplot';
import type { SeriesSpec } from '../../charts/options.ts';
import type { ChartTheme } from '../../charts/palette.ts';
import { UPlotChart } from '../../charts/UPlotChart.tsx';
import { useT } from '../../i18n/i18n.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { SeriesTable } from './SeriesTable.tsx';

export const CHART_HEIGHT = 240;

export function ChartBody(props: {
  title: string;
  /** Columns built for uPlot; null while the answer is on its way. */
  data: uPlot.AlignedData | null;
  error: unknown;
  onRetry: () => void;
  specs: SeriesSpec[];
  options: uPlot.Options;
  theme: ChartTheme;
  tz: string;
  table: boolean;
}) {
  const { t } = useT();
  const { data } = props;
  if (props.error) return <ErrorState error={props.error} onRetry={props.onRetry} />;
  if (!data)
    return (
      <Stack
        gap={4}
        role="status"
        aria-busy="true"
        aria-label={t('common.loading')}
        data-testid="chart-loading"
      >
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="xs" c="dimmed">
            {t('common.loading')}
          </Text>
        </Group>
        <Skeleton height={CHART_HEIGHT - 24} />
      </Stack>
    );
  if (data[0].length === 0)
    return (
      <Text c="dimmed" ta="center" py={CHART_HEIGHT / 3} data-testid="chart-empty">
        {t('common.empty')}
      </Text>
    );
  if (props.table) return <SeriesTable data={data} specs={props.specs} tz={props.tz} caption={props.title} />;
  return (
    <UPlotChart
      options={props.options}
      data={data}
      theme={props.theme}
      label={props.title}
      resetLabel={t('details.resetZoom')}
    />
  );
}
