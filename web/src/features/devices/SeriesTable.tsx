import { Table, Text } from '@mantine/core';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef } from 'react';
import type uPlot from 'uplot';
import { formatValue, type SeriesSpec, seriesLayout } from '../../charts/options.ts';
import { useT } from '../../i18n/i18n.ts';
import { formatInstant, instantColumnStyle } from '../../lib/time.ts';

const ROW = 32;

/** The chart's data as a table, newest first; rows are virtualized so a year stays smooth. */
export function SeriesTable({
  data,
  specs,
  tz,
  caption,
}: {
  data: uPlot.AlignedData;
  specs: SeriesSpec[];
  tz: string;
  caption: string;
}) {
  const { t, locale } = useT();
  const parent = useRef<HTMLDivElement>(null);
  const n = data[0].length;
  const layout = seriesLayout(specs);
  const timeStyle = useMemo(() => instantColumnStyle(data[0]), [data]);
  const v = useVirtualizer({
    count: n,
    getScrollElement: () => parent.current,
    estimateSize: () => ROW,
    overscan: 12,
  });
  const cols = specs.flatMap((s, i) => {
    const slot = layout[i]!;
    const out = [
      { key: `${s.param}-avg`, label: `${s.label} ${s.unit}`.trim(), idx: slot.avg, scale: s.scale ?? 1 },
    ];
    if (slot.min !== undefined)
      out.push({
        key: `${s.param}-min`,
        label: `${s.label} ${t('details.min')}`,
        idx: slot.min,
        scale: s.scale ?? 1,
      });
    if (slot.max !== undefined)
      out.push({
        key: `${s.param}-max`,
        label: `${s.label} ${t('details.max')}`,
        idx: slot.max,
        scale: s.scale ?? 1,
      });
    return out;
  });
  const items = v.getVirtualItems();
  const padTop = items[0]?.start ?? 0;
  const padBottom = v.getTotalSize() - (items[items.length - 1]?.end ?? 0);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section ref={parent} style={{ maxHeight: 360, overflow: 'auto' }} tabIndex={0} aria-label={caption}>
      <Table striped stickyHeader fz="xs" captionSide="bottom">
        <Table.Caption>
          <Text size="xs" c="dimmed" component="span">
            {t('details.tableCaption', { title: caption, count: n })}
          </Text>
        </Table.Caption>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('col.time')}</Table.Th>
            {cols.map((c) => (
              <Table.Th key={c.key}>{c.label}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {padTop > 0 && (
            <tr>
              <td style={{ height: padTop, padding: 0 }} colSpan={cols.length + 1} />
            </tr>
          )}
          {items.map((row) => {
            const i = n - 1 - row.index;
            return (
              <Table.Tr key={row.key} h={ROW}>
                <Table.Td data-testid="table-time">
                  {formatInstant(data[0][i] as number, tz, locale, timeStyle)}
                </Table.Td>
                {cols.map((c) => {
                  const val = (data[c.idx] as ArrayLike<number | null>)[i];
                  return (
                    <Table.Td key={c.key}>
                      {formatValue(val === null || val === undefined ? null : val / c.scale, '')}
                    </Table.Td>
                  );
                })}
              </Table.Tr>
            );
          })}
          {padBottom > 0 && (
            <tr>
              <td style={{ height: padBottom, padding: 0 }} colSpan={cols.length + 1} />
            </tr>
          )}
        </Table.Tbody>
      </Table>
    </section>
  );
}
