/**
 * The Energy view's two charts, lazily imported so Nivo loads only there: the flow diagram (@nivo/sankey)
 * of the period and the home's consumption by source per interval (@nivo/bar, stacked).
 */
import type { Flows } from '@kilowatch/core';
import { Box, Text } from '@mantine/core';
import { ResponsiveBar } from '@nivo/bar';
import { ResponsiveSankey } from '@nivo/sankey';
import { useMemo } from 'react';
import { formatValue } from '../../charts/options.ts';
import { AXIS_COLORS, type ChartTheme } from '../../charts/palette.ts';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { formatInZone } from '../../lib/time.ts';
import { consumptionBySource, type FlowNode, sankeyData } from './flowsView.ts';

export const FLOW_COLORS: Record<FlowNode, string> = {
  production: '#f59f00',
  batteryOut: '#ae3ec9',
  batteryIn: '#ae3ec9',
  gridIn: '#f76707',
  gridOut: '#2f9e44',
  home: '#1c7ed6',
};
const SOURCE_COLORS = { productionToHome: '#f59f00', batteryToHome: '#ae3ec9', gridToHome: '#f76707' };
const SOURCES = ['productionToHome', 'batteryToHome', 'gridToHome'] as const;

function nivoTheme(theme: ChartTheme) {
  const axis = AXIS_COLORS[theme];
  return {
    text: { fill: axis.stroke, fontSize: 11 },
    grid: { line: { stroke: axis.grid } },
    axis: { ticks: { text: { fill: axis.stroke } } },
    tooltip: {
      container: {
        background: theme === 'dark' ? '#25262b' : '#fff',
        color: theme === 'dark' ? '#c1c2c5' : '#212529',
        fontSize: 12,
      },
    },
  };
}

const kwh = (v: number) => formatValue(v, 'kWh');

export default function FlowCharts({ flows, theme }: { flows: Flows; theme: ChartTheme }) {
  const { t } = useT();
  const sankey = useMemo(() => sankeyData(flows.totals.flows), [flows]);
  const bars = useMemo(() => consumptionBySource(flows), [flows]);
  const nodeName = (id: FlowNode) => t(`flows.node.${id}` as MessageId);
  const tickFormat = flows.interval === '1h' ? 'HH:mm' : flows.interval === '1mo' ? 'MMM' : 'D';
  const label = (iso: string) => formatInZone(Date.parse(iso), flows.tz, tickFormat);
  return (
    <>
      {sankey.links.length === 0 ? (
        <Text c="dimmed" ta="center" py="lg" data-testid="flows-empty">
          {t('common.empty')}
        </Text>
      ) : (
        <Box h={260} data-testid="flows-sankey">
          <ResponsiveSankey
            data={sankey}
            margin={{ top: 10, right: 110, bottom: 10, left: 110 }}
            align="justify"
            sort="input"
            colors={(n) => FLOW_COLORS[n.id]}
            nodeThickness={14}
            nodeSpacing={18}
            nodeOpacity={1}
            linkOpacity={0.35}
            enableLinkGradient
            label={(n) => nodeName(n.id)}
            labelPosition="outside"
            labelPadding={8}
            valueFormat={kwh}
            theme={nivoTheme(theme)}
            animate={false}
            ariaLabel={t('flows.diagram')}
          />
        </Box>
      )}
      <Box h={220} data-testid="flows-bars">
        <ResponsiveBar
          data={bars}
          keys={[...SOURCES]}
          indexBy="t"
          margin={{ top: 10, right: 10, bottom: 30, left: 48 }}
          padding={0.2}
          colors={({ id }) => SOURCE_COLORS[id as (typeof SOURCES)[number]]}
          enableLabel={false}
          valueFormat={kwh}
          axisBottom={{
            format: label,
            tickSize: 0,
            tickPadding: 6,
            tickValues:
              bars.length > 12
                ? bars.filter((_, i) => i % Math.ceil(bars.length / 8) === 0).map((b) => b.t)
                : undefined,
          }}
          axisLeft={{ tickSize: 0, tickPadding: 4, format: (v: number) => formatValue(v, '') }}
          legendLabel={(d) => t(`flows.source.${d.id}` as MessageId)}
          tooltipLabel={(d) => `${t(`flows.source.${d.id}` as MessageId)} · ${label(String(d.indexValue))}`}
          theme={nivoTheme(theme)}
          animate={false}
          ariaLabel={t('flows.bySource')}
        />
      </Box>
    </>
  );
}
