/**
 * The range control shared by device charts, the data log and comparisons: presets from one day to a
 * year and a custom range picked on a calendar (Mantine dates, in the interface language's format and
 * first weekday). The range math lives in ranges.ts.
 */
import { Box, Group, SegmentedControl } from '@mantine/core';
import { type CalendarAriaLabels, DatePickerInput, DatesProvider } from '@mantine/dates';
import '@mantine/dates/styles.css';
import './calendar.css';
import 'dayjs/locale/pl.js';
import 'dayjs/locale/tr.js';
import { type ReactNode, useMemo, useState } from 'react';
import { type MessageId, useT } from '../i18n/i18n.ts';
import { formatInZone } from '../lib/time.ts';
import {
  type CustomRangeProblem,
  customRangeProblem,
  LONG_PRESETS,
  type LongPreset,
  longRange,
  type TimeRange,
} from './ranges.ts';

/** Date pickers below follow the interface language: its date format, month names and first weekday. */
export function LocalDates({ children }: { children: ReactNode }) {
  const { locale } = useT();
  return (
    <DatesProvider settings={{ locale, firstDayOfWeek: locale === 'en' ? 0 : 1 }}>{children}</DatesProvider>
  );
}

/**
 * Names for a calendar's previous/next buttons (month, year, decade) in the interface language. The level
 * switch ("June 2025") keeps no label of its own: its name is the month or year it shows (WCAG 2.5.3).
 */
export function useCalendarAriaLabels(): CalendarAriaLabels {
  const { t } = useT();
  return {
    previousMonth: t('range.calendar.previousMonth'),
    nextMonth: t('range.calendar.nextMonth'),
    previousYear: t('range.calendar.previousYear'),
    nextYear: t('range.calendar.nextYear'),
    previousDecade: t('range.calendar.previousDecade'),
    nextDecade: t('range.calendar.nextDecade'),
  };
}

/** Two local days (`YYYY-MM-DD`) on one calendar; the later day can be no later than today. */
export function CustomRangeInput(props: {
  value: [string | null, string | null];
  onChange: (v: [string | null, string | null]) => void;
  today: string;
  error?: string;
}) {
  const { t } = useT();
  const ariaLabels = useCalendarAriaLabels();
  return (
    <LocalDates>
      <DatePickerInput
        type="range"
        size="xs"
        aria-label={t('range.customLabel')}
        placeholder={t('range.customLabel')}
        value={props.value}
        onChange={(v) => props.onChange([v[0] ? String(v[0]) : null, v[1] ? String(v[1]) : null])}
        maxDate={props.today}
        valueFormat="L"
        allowSingleDateInRange
        ariaLabels={ariaLabels}
        miw={200}
        error={props.error}
        data-testid="range-custom"
      />
    </LocalDates>
  );
}

/** One local day (`YYYY-MM-DD`) on a calendar. */
export function DayInput(props: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  today: string;
  testId?: string;
}) {
  const ariaLabels = useCalendarAriaLabels();
  return (
    <LocalDates>
      <DatePickerInput
        size="xs"
        label={props.label}
        value={props.value}
        onChange={(v) => v && props.onChange(String(v))}
        maxDate={props.today}
        valueFormat="L"
        ariaLabels={ariaLabels}
        miw={120}
        data-testid={props.testId}
      />
    </LocalDates>
  );
}

/**
 * The preset buttons; six do not fit a phone's width, so they wrap onto a second row there (a box that
 * scrolled sideways showed "1 year" as the last choice, the others out of sight).
 */
export function RangePresets<P extends string>(props: {
  value: P;
  onChange: (p: P) => void;
  presets: readonly { value: P; label: string }[];
  labelledBy?: string;
}) {
  const { t } = useT();
  return (
    <Box maw="100%">
      <SegmentedControl
        size="xs"
        maw="100%"
        styles={{ root: { flexWrap: 'wrap' } }}
        aria-label={props.labelledBy ? undefined : t('details.range')}
        aria-labelledby={props.labelledBy}
        value={props.value}
        onChange={(v) => props.onChange(v as P)}
        data={[...props.presets]}
        data-testid="range-presets"
      />
    </Box>
  );
}

export function presetLabel(t: ReturnType<typeof useT>['t'], p: LongPreset): string {
  return t(`range.${p}` as MessageId);
}

/** Today as a local day in `tz`, the latest a picker offers. */
export function todayIn(tz: string): string {
  return formatInZone(Date.now(), tz, 'YYYY-MM-DD');
}

/**
 * A long-range control and the range it stands for (null while a custom range lacks a day, with the
 * reason in `problem`).
 */
export function useLongRange(tz: string, initial: LongPreset = 'week') {
  const { t } = useT();
  const [preset, setPreset] = useState<LongPreset>(initial);
  const [custom, setCustom] = useState<[string | null, string | null]>([null, null]);
  const range = useMemo<TimeRange | null>(
    () => longRange(preset, Date.now(), tz, custom),
    [preset, tz, custom],
  );
  const problem: CustomRangeProblem | null = preset === 'custom' ? customRangeProblem(custom, tz) : null;
  const control = (
    <Group gap="xs" wrap="wrap">
      <RangePresets
        value={preset}
        onChange={setPreset}
        presets={LONG_PRESETS.map((p) => ({ value: p, label: presetLabel(t, p) }))}
      />
      {preset === 'custom' && <CustomRangeInput value={custom} onChange={setCustom} today={todayIn(tz)} />}
    </Group>
  );
  return { preset, range, problem, control };
}
