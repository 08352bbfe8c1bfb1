import type { Location, Tariff } from '@kilowatch/core';
import {
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  SimpleGrid,
  Skeleton,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useDevices } from '../../api/devices/get-devices.ts';
import { useDeleteTariff } from '../../api/locations/delete-tariff.ts';
import { useLocation } from '../../api/locations/get-location.ts';
import { useTariffs } from '../../api/locations/get-tariffs.ts';
import { useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { formatDay, intlLocale } from '../../lib/time.ts';
import { detailsPath } from '../../shared/devices/paths.ts';
import { StatusBadge } from '../../shared/devices/StatusBadge.tsx';
import { ConfirmDelete } from '../../shared/ui/ConfirmDelete.tsx';
import { ErrorState, RoutePending } from '../../shared/ui/RouteStates.tsx';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';
import { EnergyCard } from './EnergyCard.tsx';
import { tariffLabel } from './LocationsPage.tsx';
import { PricesCard, SettlementCard } from './SettlementCard.tsx';

function Field({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {value || '—'}
      </Text>
    </div>
  );
}

function Details({ location, tariffs }: { location: Location; tariffs: Tariff[] | undefined }) {
  const { t } = useT();
  const current = tariffs?.find((x) => x.id === location.tariffId);
  return (
    <Card withBorder>
      <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="sm">
        <Field label={t('col.name')} value={location.name} />
        <Field label={t('places.location.code')} value={location.code} />
        <Field label={t('places.location.address')} value={location.address} />
        <Field label={t('places.location.city')} value={location.city} />
        <Field label={t('places.location.timezone')} value={location.timezone} />
        <Field
          label={t('col.tariff')}
          value={current ? tariffLabel(current) : location.tariffId === null ? t('common.none') : ''}
        />
      </SimpleGrid>
    </Card>
  );
}

function Devices({ locationId }: { locationId: number }) {
  const { t } = useT();
  const devices = useDevices();
  const list = (devices.data ?? []).filter((d) => d.location && String(d.location.id) === String(locationId));
  return (
    <Card withBorder>
      <Title order={2} fz="h4" mb="xs">
        {t('places.location.devices')}
      </Title>
      {devices.isPending ? (
        <Skeleton height={60} />
      ) : devices.isError && devices.data === undefined ? (
        <ErrorState error={devices.error} onRetry={() => void devices.refetch()} />
      ) : list.length === 0 ? (
        <Text c="dimmed" size="sm">
          {t('places.location.noDevices')}
        </Text>
      ) : (
        <ScrollTable minWidth={360} label={t('places.location.devices')}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('col.name')}</Table.Th>
                <Table.Th>{t('col.model')}</Table.Th>
                <Table.Th>{t('col.role')}</Table.Th>
                <Table.Th>{t('col.status')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((d) => (
                <Table.Tr key={d.id} data-testid="location-device">
                  <Table.Td>
                    <Anchor component={Link} to={detailsPath(d)}>
                      {d.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{d.modelName || d.model}</Table.Td>
                  <Table.Td data-testid="location-device-role">{t(`role.${d.role}`)}</Table.Td>
                  <Table.Td>
                    <StatusBadge status={d.status} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Card>
  );
}

function TariffRow({ tariff, location }: { tariff: Tariff; location: Location }) {
  const { t, locale } = useT();
  const remove = useDeleteTariff(String(location.id));
  const confirm = async () => {
    try {
      await remove.mutateAsync(String(tariff.id));
      notify({ color: 'green', message: t('places.tariff.deleted') });
      return true;
    } catch {
      notify({ color: 'red', message: t('places.tariff.deleteFailed') });
      return false;
    }
  };
  // Prices per kWh in the interface language's number format (0,62 in pl and tr), up to 4 decimals.
  const price = new Intl.NumberFormat(intlLocale(locale), {
    minimumFractionDigits: 2,
    maximumFractionDigits: 4,
  });
  const zonePrices =
    tariff.group === 'G11'
      ? [tariff.zone1Price]
      : [tariff.zone1Price, tariff.zone2Price, ...(tariff.zone3Price ? [tariff.zone3Price] : [])];
  const prices = zonePrices.map((p) => price.format(p)).join(' / ');
  return (
    <Table.Tr data-testid="tariff-row">
      <Table.Td>
        <Group gap={6} wrap="nowrap">
          <Text size="sm">{tariff.name}</Text>
          {tariff.id === location.tariffId && (
            <Badge size="xs" variant="light">
              {t('places.tariff.current')}
            </Badge>
          )}
        </Group>
      </Table.Td>
      <Table.Td>{tariff.group}</Table.Td>
      <Table.Td>{tariff.operator ?? '—'}</Table.Td>
      <Table.Td>
        {prices} {tariff.currency}
      </Table.Td>
      <Table.Td>
        {formatDay(tariff.validFrom, locale)} – {tariff.validTo ? formatDay(tariff.validTo, locale) : '…'}
      </Table.Td>
      <Table.Td>
        <Group gap={4} wrap="nowrap">
          <Button
            size="compact-xs"
            variant="subtle"
            component={Link}
            to={`/location/tariff-edit/${location.id}/${tariff.id}`}
            aria-label={`${t('action.edit')}: ${tariff.name}`}
          >
            {t('action.edit')}
          </Button>
          <Button
            size="compact-xs"
            variant="subtle"
            component={Link}
            to={`/stats/tariff/${tariff.id}`}
            aria-label={`${t('places.tariff.stats')}: ${tariff.name}`}
          >
            {t('places.tariff.stats')}
          </Button>
          <ConfirmDelete
            label={`${t('common.delete')}: ${tariff.name}`}
            title={t('places.tariff.delete')}
            question={t('places.tariff.deleteConfirm', { name: tariff.name })}
            onConfirm={confirm}
            pending={remove.isPending}
          />
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

function Tariffs({ location }: { location: Location }) {
  const { t } = useT();
  const tariffs = useTariffs(String(location.id));
  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs">
        <Title order={2} fz="h4">
          {t('places.location.tariffs')}
        </Title>
        <Button
          size="xs"
          component={Link}
          to={`/location/tariff-edit/${location.id}/new`}
          data-testid="new-tariff"
        >
          {t('places.tariff.new')}
        </Button>
      </Group>
      {tariffs.isPending ? (
        <Skeleton height={60} />
      ) : tariffs.isError && tariffs.data === undefined ? (
        <ErrorState error={tariffs.error} onRetry={() => void tariffs.refetch()} />
      ) : tariffs.data.length === 0 ? (
        <Text c="dimmed" size="sm">
          {t('places.tariff.empty')}
        </Text>
      ) : (
        <ScrollTable minWidth={720} label={t('places.location.tariffs')}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('col.name')}</Table.Th>
                <Table.Th>{t('places.tariff.group')}</Table.Th>
                <Table.Th>{t('places.tariff.operator')}</Table.Th>
                <Table.Th>{t('places.tariff.prices')}</Table.Th>
                <Table.Th>{t('places.tariff.valid')}</Table.Th>
                <Table.Th>{t('col.actions')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {tariffs.data.map((x) => (
                <TariffRow key={x.id} tariff={x} location={location} />
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Card>
  );
}

function LocationEnergy({ location }: { location: Location }) {
  const devices = useDevices();
  const here = (devices.data ?? []).filter(
    (d) => d.location && String(d.location.id) === String(location.id),
  );
  if (devices.isPending || here.length === 0) return null;
  return <EnergyCard location={location} devices={here} />;
}

export default function LocationViewPage() {
  const { t } = useT();
  const { id } = useParams({ strict: false }) as { id: string };
  const location = useLocation(id);
  const tariffs = useTariffs(id);
  if (location.isPending) return <RoutePending />;
  if (location.isError) return <ErrorState error={location.error} onRetry={() => void location.refetch()} />;
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={1} fz="h2">
          {t('page.location')}: {location.data.name}
        </Title>
        <Group gap="xs">
          <Button variant="default" component={Link} to="/location/index">
            {t('common.back')}
          </Button>
          <Button component={Link} to={`/location/edit/${id}`} data-testid="edit-location">
            {t('action.edit')}
          </Button>
        </Group>
      </Group>
      <Details location={location.data} tariffs={tariffs.data} />
      <LocationEnergy location={location.data} />
      <SettlementCard location={location.data} />
      <Tariffs location={location.data} />
      <PricesCard location={location.data} />
      <Devices locationId={location.data.id} />
    </Stack>
  );
}
