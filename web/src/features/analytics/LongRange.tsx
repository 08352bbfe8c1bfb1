/**
 * Any range for the analyst's charts: presets from 24 hours to a year and a custom range picked on a
 * calendar (Mantine dates, in the interface language). The API picks the interval that keeps a chart
 * readable (docs/api.md §Telemetry: at most 2,000 points), so a year arrives as daily buckets with min/max.
 */
import { addLocalDays, DAY_MS } from '@kilowatch/core';
import { Box, Group, SegmentedControl } from '@mantine/core';
import { DatePickerInput, DatesProvider } from '@mantine/dates';
import '@mantine/dates/styles.css';
import 'dayjs/locale/pl.js';
import 'dayjs/locale/tr.js';
import { useMemo, useState } from 'react';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { formatInZone } from '../../lib/time.ts';
import { parseLocalDate, rangeFor, type TimeRange } from '../devices/ranges.ts';

export const LONG_PRESETS = ['day', 'week', 'month', 'quarter', 'year', 'custom'] as const;
export type LongPreset = (typeof LONG_PRESETS)[number];

/** The range of a preset ending today, or of two local dates (both days included). */
export function longRange(
  preset: LongPreset,
  now: number,
  tz: string,
  custom: readonly [string | null, string | null] = [null, null],
): TimeRange | null {
  switch (preset) {
    case 'quarter':
      return { from: addLocalDays(now, -89, tz), to: addLocalDays(now, 1, tz) };
    case 'year':
      return { from: addLocalDays(now, -364, tz), to: addLocalDays(now, 1, tz) };
    case 'custom': {
      const from = custom[0] ? parseLocalDate(custom[0], tz) : null;
      const last = custom[1] ? parseLocalDate(custom[1], tz) : null;
      if (from === null || last === null || last < from) return null;
      return { from, to: addLocalDays(last, 1, tz) };
    }
    default:
      return rangeFor(preset, now, tz);
  }
}

/** Whether min/max bands are worth asking for: buckets of an hour or more. */
export function wantsBands(range: TimeRange): boolean {
  return range.to - range.from > 7 * DAY_MS;
}

export function useLongRange(tz: string, initial: LongPreset = 'week') {
  const { t, locale } = useT();
  const [preset, setPreset] = useState<LongPreset>(initial);
  const [custom, setCustom] = useState<[string | null, string | null]>([null, null]);
  const range = useMemo(() => longRange(preset, Date.now(), tz, custom), [preset, tz, custom]);
  const today = formatInZone(Date.now(), tz, 'YYYY-MM-DD');
  const control = (
    <Group gap="xs" wrap="wrap">
      {/* Six presets do not fit a phone: the control scrolls in its own box, never the page. */}
      <Box maw="100%" style={{ overflowX: 'auto' }}>
        <SegmentedControl
          size="xs"
          aria-label={t('details.range')}
          value={preset}
          onChange={(v) => setPreset(v as LongPreset)}
          data={LONG_PRESETS.map((p) => ({ value: p, label: t(`range.${p}` as MessageId) }))}
          data-testid="range-presets"
        />
      </Box>
      {preset === 'custom' && (
        <DatesProvider settings={{ locale, firstDayOfWeek: locale === 'en' ? 0 : 1 }}>
          <DatePickerInput
            type="range"
            size="xs"
            aria-label={t('range.customLabel')}
            placeholder={t('range.customLabel')}
            value={custom}
            onChange={(v) => setCustom([v[0] ? String(v[0]) : null, v[1] ? String(v[1]) : null])}
            maxDate={today}
            valueFormat="L"
            allowSingleDateInRange
            miw={200}
            data-testid="range-custom"
          />
        </DatesProvider>
      )}
    </Group>
  );
  return { preset, range, control };
}
