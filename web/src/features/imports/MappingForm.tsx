/** The mapping of a CSV file's columns (or a line-protocol file's fields) to Kilowatch's parameters. */
import { COUNTER_NAMES, PARAM_NAMES, paramDef } from '@kilowatch/core';
import { Autocomplete, Group, SegmentedControl, Select, SimpleGrid, Stack, Text } from '@mantine/core';
import { useMemo } from 'react';
import { useT } from '../../i18n/i18n.ts';
import { paramSelectData } from '../../shared/devices/paramNames.ts';
import { timeZoneOptions } from '../../shared/forms/fields.ts';
import {
  type CsvForm,
  type FieldMapping,
  PRECISIONS,
  type Precision,
  STAMP_FORMATS,
  type ValueColumn,
} from './filePreview.ts';

const READINGS = ['counter-kWh', 'counter-Wh', 'interval-kWh', 'interval-Wh'] as const;
/** The select's value of a column left out (a parameter is never named so). */
const SKIP = '-';
const INTERVALS = ['15', '30', '60', 'day'] as const;

/** Energy registers take a unit and may be interval energies; gauges are taken as they are. */
export function isEnergyParam(param: string): boolean {
  return COUNTER_NAMES.includes(param) && (paramDef(param)?.unit ?? '').endsWith('h');
}

function useParamData() {
  const { t } = useT();
  return useMemo(
    () => [{ value: SKIP, label: t('imports.mapping.skip') }, ...paramSelectData(t, PARAM_NAMES)],
    [t],
  );
}

/** One mapped value: its parameter and, for energy, what its numbers are. */
export function ValueMapping({
  label,
  value,
  onChange,
  testId,
}: {
  label: string;
  value: { param: string; reading: ValueColumn['reading'] };
  onChange: (v: { param: string; reading: ValueColumn['reading'] }) => void;
  testId: string;
}) {
  const { t } = useT();
  const data = useParamData();
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs" data-testid={testId}>
      <Select
        label={label}
        data={data}
        value={value.param || SKIP}
        onChange={(p) => onChange({ ...value, param: p && p !== SKIP ? p : '' })}
        searchable
        allowDeselect={false}
        comboboxProps={{ width: 'target' }}
        data-testid={`${testId}-param`}
      />
      {isEnergyParam(value.param) && (
        <Select
          label={t('imports.mapping.reading')}
          data={READINGS.map((r) => ({ value: r, label: t(`imports.mapping.reading.${r}`) }))}
          value={value.reading}
          onChange={(r) => r && onChange({ ...value, reading: r as ValueColumn['reading'] })}
          allowDeselect={false}
          data-testid={`${testId}-reading`}
        />
      )}
    </SimpleGrid>
  );
}

export function CsvMappingForm({
  form,
  columns,
  onChange,
}: {
  form: CsvForm;
  columns: string[];
  onChange: (f: CsvForm) => void;
}) {
  const { t } = useT();
  const zones = useMemo(() => timeZoneOptions(form.zone), [form.zone]);
  const hasInterval = form.values.some(
    (v) => v.param && isEnergyParam(v.param) && v.reading.startsWith('interval'),
  );
  const setValue = (i: number, v: Partial<ValueColumn>) =>
    onChange({ ...form, values: form.values.map((x, j) => (j === i ? { ...x, ...v } : x)) });
  const stampLabel = (f: string) =>
    f === 'iso' || f === 'epoch-s' || f === 'epoch-ms' ? t(`imports.mapping.stampFormat.${f}`) : f;
  return (
    <Stack gap="sm" data-testid="import-csv-mapping">
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <Select
          label={t('imports.mapping.timestamp')}
          data={columns.map((c) => ({ value: c, label: c }))}
          value={form.timestampColumn}
          onChange={(c) => {
            if (!c) return;
            const values = columns
              .filter((x) => x !== c)
              .map(
                (column) =>
                  form.values.find((v) => v.column === column) ?? {
                    column,
                    param: '',
                    reading: 'counter-kWh' as const,
                  },
              );
            onChange({ ...form, timestampColumn: c, values });
          }}
          allowDeselect={false}
          data-testid="import-timestamp-column"
        />
        <Autocomplete
          label={t('imports.mapping.stampFormat')}
          description={t('imports.mapping.stampFormat.hint')}
          data={STAMP_FORMATS.map((f) => ({ value: f, label: stampLabel(f) }))}
          value={form.stampFormat}
          onChange={(f) => onChange({ ...form, stampFormat: f })}
          data-testid="import-stamp-format"
        />
        <Select
          label={t('imports.mapping.zone')}
          data={zones}
          value={form.zone}
          onChange={(z) => z && onChange({ ...form, zone: z })}
          searchable
          allowDeselect={false}
          data-testid="import-zone"
        />
      </SimpleGrid>
      <Group gap="lg" wrap="wrap" align="flex-end">
        <Stack gap={4}>
          <Text size="sm" fw={500} id="import-separator-label">
            {t('imports.mapping.separator')}
          </Text>
          <SegmentedControl
            aria-labelledby="import-separator-label"
            value={form.separator}
            onChange={(s) => onChange({ ...form, separator: s as CsvForm['separator'] })}
            data={[
              { value: ',', label: t('imports.mapping.separator.comma') },
              { value: ';', label: t('imports.mapping.separator.semicolon') },
              { value: '\t', label: t('imports.mapping.separator.tab') },
            ]}
            data-testid="import-separator"
          />
        </Stack>
        <Stack gap={4}>
          <Text size="sm" fw={500} id="import-decimal-label">
            {t('imports.mapping.decimal')}
          </Text>
          <SegmentedControl
            aria-labelledby="import-decimal-label"
            value={form.decimal}
            onChange={(d) => onChange({ ...form, decimal: d as CsvForm['decimal'] })}
            data={[
              { value: '.', label: t('imports.mapping.decimal.point') },
              { value: ',', label: t('imports.mapping.decimal.comma') },
            ]}
            data-testid="import-decimal"
          />
        </Stack>
      </Group>
      {form.values.map((v, i) => (
        <ValueMapping
          key={v.column}
          label={t('imports.mapping.column', { column: v.column })}
          value={v}
          onChange={(x) => setValue(i, x)}
          testId={`import-value-${i}`}
        />
      ))}
      {hasInterval && <IntervalFields form={form} onChange={onChange} />}
    </Stack>
  );
}

export function IntervalFields<F extends { interval: string; intervalStamp: 'start' | 'end' }>({
  form,
  onChange,
}: {
  form: F;
  onChange: (f: F) => void;
}) {
  const { t } = useT();
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
      <Select
        label={t('imports.mapping.interval')}
        data={INTERVALS.map((i) => ({
          value: i,
          label:
            i === 'day'
              ? t('imports.mapping.interval.day')
              : t('imports.mapping.interval.minutes', { count: i }),
        }))}
        value={form.interval}
        onChange={(i) => i && onChange({ ...form, interval: i })}
        allowDeselect={false}
        data-testid="import-interval"
      />
      <Select
        label={t('imports.mapping.intervalStamp')}
        data={(['start', 'end'] as const).map((s) => ({
          value: s,
          label: t(`imports.mapping.intervalStamp.${s}`),
        }))}
        value={form.intervalStamp}
        onChange={(s) => s && onChange({ ...form, intervalStamp: s as 'start' | 'end' })}
        allowDeselect={false}
        data-testid="import-interval-stamp"
      />
    </SimpleGrid>
  );
}

/** A line-protocol file's fields → parameters, its timestamp unit and, for interval energies, the interval. */
export function LineProtocolMappingForm({
  fields,
  onFields,
  precision,
  onPrecision,
  clock,
  onClock,
}: {
  fields: FieldMapping[];
  onFields: (f: FieldMapping[]) => void;
  precision: Precision;
  onPrecision: (p: Precision) => void;
  clock: CsvForm;
  onClock: (c: CsvForm) => void;
}) {
  const { t } = useT();
  const hasInterval = fields.some(
    (f) => f.param && isEnergyParam(f.param) && f.reading.startsWith('interval'),
  );
  return (
    <Stack gap="sm" data-testid="import-lp-mapping">
      <Select
        label={t('imports.mapping.precision')}
        data={PRECISIONS.map((p) => ({ value: p, label: t(`imports.mapping.precision.${p}`) }))}
        value={precision}
        onChange={(p) => p && onPrecision(p as Precision)}
        allowDeselect={false}
        data-testid="import-precision"
      />
      {fields.map((f, i) => (
        <ValueMapping
          key={`${f.measurement}.${f.field}`}
          label={t('imports.mapping.field', { field: `${f.measurement}.${f.field}` })}
          value={f}
          onChange={(x) => onFields(fields.map((y, j) => (j === i ? { ...y, ...x } : y)))}
          testId={`import-field-${i}`}
        />
      ))}
      {hasInterval && <IntervalFields form={clock} onChange={onClock} />}
    </Stack>
  );
}
