import type { Zone } from '@kilowatch/core';
import { Box, Group, Table, Text, useComputedColorScheme, VisuallyHidden } from '@mantine/core';
import { useId } from 'react';
import type { MessageId } from '../../i18n/i18n.ts';
import { useT } from '../../i18n/i18n.ts';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';
import { WEEKDAYS, zonesUsed } from './scheduleGrid.ts';
import { ZONE_COLORS } from './zoneColors.ts';

export const ZONE_NAMES: Record<Zone, MessageId> = {
  1: 'places.zone.1',
  2: 'places.zone.2',
  3: 'places.zone.3',
};

function Swatch({ zone }: { zone: Zone }) {
  const scheme = useComputedColorScheme('light', { getInitialValueInEffect: false });
  const c = ZONE_COLORS[scheme][zone];
  return (
    <Box
      component="span"
      aria-hidden
      style={{
        display: 'inline-block',
        width: 14,
        height: 14,
        borderRadius: 3,
        background: c.bg,
        border: '1px solid var(--mantine-color-default-border)',
      }}
    />
  );
}

/** Week × 24 h zones: rows Monday to Sunday, columns the hours, each cell its zone number and colour. */
export function ScheduleGrid({
  grid,
  holiday = null,
}: {
  grid: readonly (readonly Zone[])[];
  /** A public holiday's hours, when they differ from the weekday's (shown as an extra row). */
  holiday?: readonly Zone[] | null;
}) {
  const { t } = useT();
  const scheme = useComputedColorScheme('light', { getInitialValueInEffect: false });
  const captionId = useId();
  const used = zonesUsed(holiday ? [...grid, holiday] : grid);
  const rows: { day: string; label: string; zones: readonly Zone[] }[] = [
    ...grid.map((zones, d) => {
      const day = WEEKDAYS[d] ?? 'mon';
      return { day, label: t(`places.day.${day}` as MessageId), zones };
    }),
    ...(holiday ? [{ day: 'holiday', label: t('places.day.holiday'), zones: holiday }] : []),
  ];
  return (
    <Box data-testid="schedule-grid">
      {/* The title above the table's scroll box wraps in the card; inside it a phone would cut it. */}
      <Text size="sm" fw={500} mb={4} id={captionId}>
        {t('places.preview.caption')}
      </Text>
      <ScrollTable minWidth={600} label={t('places.preview.caption')}>
        <Table
          withTableBorder
          withColumnBorders
          verticalSpacing={2}
          horizontalSpacing={0}
          fz="xs"
          style={{ tableLayout: 'fixed' }}
          aria-labelledby={captionId}
        >
          <Table.Thead>
            <Table.Tr>
              <Table.Th style={{ width: 44 }}>
                <VisuallyHidden>{t('places.preview.day')}</VisuallyHidden>
              </Table.Th>
              {Array.from({ length: 24 }, (_, h) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: the hours are the columns
                <Table.Th key={h} ta="center" fw={400} scope="col">
                  {h}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map(({ day, label, zones }) => (
              <Table.Tr key={day} data-day={day}>
                <Table.Th scope="row" fw={500} pl={4}>
                  {label}
                </Table.Th>
                {zones.map((zone, h) => (
                  <Table.Td
                    // biome-ignore lint/suspicious/noArrayIndexKey: the hours are the columns
                    key={h}
                    ta="center"
                    data-zone={zone}
                    data-hour={h}
                    title={`${label} ${h}:00–${h + 1}:00 · ${t(ZONE_NAMES[zone])}`}
                    style={{ background: ZONE_COLORS[scheme][zone].bg, color: ZONE_COLORS[scheme][zone].fg }}
                  >
                    {zone}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollTable>
      <Group gap="md" mt={6} aria-label={t('places.preview.legend')} role="list">
        {used.map((z) => (
          <Group key={z} gap={6} role="listitem" data-testid={`legend-zone-${z}`}>
            <Swatch zone={z} />
            <Text size="xs">
              {z} — {t(ZONE_NAMES[z])}
            </Text>
          </Group>
        ))}
      </Group>
    </Box>
  );
}
