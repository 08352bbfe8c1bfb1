/**
 * A one-day field typed or picked on a calendar, in the interface language's date format (en 03/10/2026,
 * pl and tr 10.03.2026) with its month names and first weekday. The value is the day as `YYYY-MM-DD`
 * ('' when empty), as the forms and the URL keep it.
 */
import { DateInput } from '@mantine/dates';
import '@mantine/dates/styles.css';
import type { ReactNode } from 'react';
import { useT } from '../i18n/i18n.ts';
import { LocalDates, useCalendarAriaLabels } from './RangeControl.tsx';
import { parseTypedDay } from './typedDay.ts';

export function DateField(props: {
  label: string;
  description?: ReactNode;
  value: string;
  onChange: (day: string) => void;
  onBlur?: () => void;
  error?: ReactNode;
  /** The latest day offered (`YYYY-MM-DD`). */
  maxDate?: string;
  clearable?: boolean;
  withAsterisk?: boolean;
  miw?: number;
  testId?: string;
}) {
  const { t, locale } = useT();
  const ariaLabels = useCalendarAriaLabels();
  return (
    <LocalDates>
      <DateInput
        label={props.label}
        description={props.description}
        value={props.value || null}
        onChange={(v) => props.onChange(v ? String(v).slice(0, 10) : '')}
        onBlur={props.onBlur}
        dateParser={(text) => parseTypedDay(text, locale)}
        valueFormat="L"
        ariaLabels={ariaLabels}
        maxDate={props.maxDate}
        clearable={props.clearable}
        clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${props.label}` }}
        error={props.error}
        withAsterisk={props.withAsterisk}
        miw={props.miw ?? 140}
        popoverProps={{ withinPortal: true }}
        data-testid={props.testId}
        data-day={props.value}
      />
    </LocalDates>
  );
}
