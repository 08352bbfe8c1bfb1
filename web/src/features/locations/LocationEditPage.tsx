import { type Location, SETTLEMENT_SCHEMES, type SettlementScheme } from '@kilowatch/core';
import { Button, Card, Group, Select, Stack, TextInput, Title } from '@mantine/core';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { type FormEvent, useMemo, useState } from 'react';
import { useLocation } from '../../api/locations/get-location.ts';
import { useTariffs } from '../../api/locations/get-tariffs.ts';
import { useSaveLocation } from '../../api/locations/save-location.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { type MessageId, useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { formatDay } from '../../lib/time.ts';
import { DateField } from '../../ranges/DateField.tsx';
import { type FieldError, timeZoneOptions } from '../../shared/forms/fields.ts';
import { ErrorState, RoutePending } from '../../shared/ui/RouteStates.tsx';
import { type LocationField, type LocationValues, locationRequest, validateLocation } from './forms.ts';
import { tariffLabel } from './LocationsPage.tsx';

/** The path segment that opens an empty form for a new location. */
export const NEW_ID = 'new';

function valuesOf(l: Location | undefined): LocationValues {
  return {
    name: l?.name ?? '',
    code: l?.code ?? '',
    address: l?.address ?? '',
    city: l?.city ?? '',
    timezone: l?.timezone ?? displayTimeZone(),
    tariffId: l?.tariffId ? String(l.tariffId) : null,
    settlementScheme: l?.settlement.scheme ?? 'none',
    installedKw: l?.settlement.installedKw != null ? String(l.settlement.installedKw) : '',
    settlementSince: l?.settlement.since ?? '',
  };
}

function LocationForm({ location }: { location: Location | undefined }) {
  const { t, locale } = useT();
  const id = location ? String(location.id) : null;
  const save = useSaveLocation(id);
  const tariffs = useTariffs(id ?? '', id !== null);
  const navigate = useNavigate();
  const [values, setValues] = useState(() => valuesOf(location));
  const [touched, setTouched] = useState<Partial<Record<LocationField, boolean>>>({});
  const errors = validateLocation(values);
  const zones = useMemo(() => timeZoneOptions(values.timezone), [values.timezone]);
  const tariffOptions = (id ? (tariffs.data ?? []) : []).map((x) => ({
    value: String(x.id),
    label: `${tariffLabel(x)} · ${formatDay(x.validFrom, locale)}`,
  }));

  const set = <K extends LocationField>(k: K, v: LocationValues[K]) => {
    setValues((s) => ({ ...s, [k]: v }));
    setTouched((s) => ({ ...s, [k]: true }));
  };
  const blur = (k: LocationField) => () => setTouched((s) => ({ ...s, [k]: true }));
  const err = (k: LocationField) => {
    const e: FieldError | undefined = touched[k] ? errors[k] : undefined;
    return e ? t(e.id, e.values) : undefined;
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({
      name: true,
      code: true,
      address: true,
      city: true,
      timezone: true,
      tariffId: true,
      installedKw: true,
      settlementSince: true,
    });
    if (Object.keys(errors).length) {
      notify({ color: 'red', message: t('msg.saveFailed') });
      return;
    }
    try {
      const saved = await save.mutateAsync(locationRequest(values));
      notify({ color: 'green', message: t('msg.saved') });
      await navigate({ to: `/location/view/${saved.id}` });
    } catch {
      notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };

  const text = (k: 'name' | 'code' | 'address' | 'city', label: string, required = false) => (
    <TextInput
      label={label}
      value={values[k]}
      onChange={(e) => set(k, e.currentTarget.value)}
      onBlur={blur(k)}
      error={err(k)}
      required={required}
      data-testid={`location-${k}`}
    />
  );

  return (
    <Card withBorder maw={640} component="form" onSubmit={submit} noValidate>
      <Stack gap="sm">
        {text('name', t('col.name'), true)}
        {text('code', t('places.location.code'))}
        {text('address', t('places.location.address'))}
        {text('city', t('places.location.city'))}
        <Select
          label={t('places.location.timezone')}
          data={zones}
          value={values.timezone}
          onChange={(v) => set('timezone', v)}
          // Emptying the text clears the value, so the field can be left empty from the keyboard.
          onSearchChange={(q) => q === '' && values.timezone !== null && set('timezone', null)}
          onBlur={blur('timezone')}
          error={err('timezone')}
          searchable
          clearable
          allowDeselect={false}
          limit={100}
          clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${t('places.location.timezone')}` }}
          nothingFoundMessage={t('places.nothingFound')}
          required
          data-testid="location-timezone"
        />
        <Select
          label={t('col.tariff')}
          description={id ? undefined : t('places.location.tariffAfterCreate')}
          data={tariffOptions}
          value={values.tariffId}
          onChange={(v) => set('tariffId', v)}
          placeholder={t('common.none')}
          clearable
          clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${t('col.tariff')}` }}
          disabled={!id}
          data-testid="location-tariff"
        />
        <Select
          label={t('places.settlement.scheme')}
          description={t(`places.settlement.scheme.${values.settlementScheme}.hint` as MessageId)}
          data={SETTLEMENT_SCHEMES.map((s) => ({
            value: s,
            label: t(`places.settlement.scheme.${s}` as MessageId),
          }))}
          value={values.settlementScheme}
          onChange={(v) => v && set('settlementScheme', v as SettlementScheme)}
          allowDeselect={false}
          data-testid="location-settlement-scheme"
        />
        {values.settlementScheme !== 'none' && (
          <Group grow align="flex-start" wrap="wrap">
            {values.settlementScheme === 'net-metering' && (
              <TextInput
                label={t('places.settlement.installedKw')}
                inputMode="decimal"
                value={values.installedKw}
                onChange={(e) => set('installedKw', e.currentTarget.value)}
                onBlur={blur('installedKw')}
                error={err('installedKw')}
                required
                miw={180}
                data-testid="location-installed-kw"
              />
            )}
            <DateField
              label={t('places.settlement.since')}
              value={values.settlementSince}
              onChange={(d) => set('settlementSince', d)}
              onBlur={blur('settlementSince')}
              error={err('settlementSince')}
              withAsterisk
              miw={180}
              testId="location-settlement-since"
            />
          </Group>
        )}
        <Group justify="flex-end">
          <Button variant="default" component={Link} to={id ? `/location/view/${id}` : '/location/index'}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={save.isPending} data-testid="save-location">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

export default function LocationEditPage() {
  const { t } = useT();
  const { id } = useParams({ strict: false }) as { id: string };
  const isNew = id === NEW_ID;
  const location = useLocation(id, !isNew);
  if (!isNew && location.isPending) return <RoutePending />;
  if (!isNew && location.isError)
    return <ErrorState error={location.error} onRetry={() => void location.refetch()} />;
  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {isNew ? t('places.location.new') : `${t('page.locationEdit')}: ${location.data?.name ?? ''}`}
      </Title>
      <LocationForm key={isNew ? NEW_ID : id} location={isNew ? undefined : location.data} />
    </Stack>
  );
}
