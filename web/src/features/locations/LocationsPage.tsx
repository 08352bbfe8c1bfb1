import type { Location, Tariff } from '@kilowatch/core';
import { Anchor, Button, Card, Group, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import { useQueries } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useDeleteLocation } from '../../api/locations/delete-location.ts';
import { useLocations } from '../../api/locations/get-locations.ts';
import { tariffsQueryOptions } from '../../api/locations/get-tariffs.ts';
import { useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { ConfirmDelete } from '../../shared/ui/ConfirmDelete.tsx';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';

export function tariffLabel(t: Pick<Tariff, 'name' | 'group'>): string {
  return t.name === t.group ? t.group : `${t.name} (${t.group})`;
}

function LocationRow({ location, tariff }: { location: Location; tariff: Tariff | null | undefined }) {
  const { t } = useT();
  const remove = useDeleteLocation();
  const confirm = async () => {
    try {
      await remove.mutateAsync(String(location.id));
      notify({ color: 'green', message: t('places.location.deleted') });
      return true;
    } catch {
      notify({ color: 'red', message: t('places.location.deleteFailed') });
      return false;
    }
  };
  return (
    <Table.Tr data-testid="location-row">
      <Table.Td>
        <Anchor component={Link} to={`/location/view/${location.id}`}>
          {location.name}
        </Anchor>
      </Table.Td>
      <Table.Td>{location.code}</Table.Td>
      <Table.Td>{location.city}</Table.Td>
      <Table.Td>{location.timezone}</Table.Td>
      <Table.Td>
        {location.tariffId === null ? (
          <Text c="dimmed" size="sm">
            {t('common.none')}
          </Text>
        ) : tariff === undefined ? (
          <Skeleton height={14} width={80} />
        ) : tariff === null ? (
          <Text size="sm">#{location.tariffId}</Text>
        ) : (
          <Anchor component={Link} to={`/stats/tariff/${tariff.id}`} size="sm">
            {tariffLabel(tariff)}
          </Anchor>
        )}
      </Table.Td>
      <Table.Td>
        <Group gap={4} wrap="nowrap">
          <Button
            size="compact-xs"
            variant="subtle"
            component={Link}
            to={`/location/edit/${location.id}`}
            aria-label={`${t('action.edit')}: ${location.name}`}
          >
            {t('action.edit')}
          </Button>
          <ConfirmDelete
            label={`${t('common.delete')}: ${location.name}`}
            title={t('places.location.delete')}
            question={t('places.location.deleteConfirm', { name: location.name })}
            onConfirm={confirm}
            pending={remove.isPending}
          />
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

export default function LocationsPage() {
  const { t } = useT();
  const locations = useLocations();
  const list = locations.data ?? [];
  // Each location's current tariff, named from its versions.
  const tariffs = useQueries({
    queries: list.map((l) => ({ ...tariffsQueryOptions(String(l.id)), enabled: l.tariffId !== null })),
  });
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={1} fz="h2">
          {t('page.locations')}
        </Title>
        <Button component={Link} to="/location/edit/new" data-testid="new-location">
          {t('places.location.new')}
        </Button>
      </Group>
      {locations.isPending ? (
        <Skeleton height={160} />
      ) : locations.isError && locations.data === undefined ? (
        <ErrorState error={locations.error} onRetry={() => void locations.refetch()} />
      ) : list.length === 0 ? (
        <Card withBorder>
          <Text c="dimmed">{t('places.location.empty')}</Text>
        </Card>
      ) : (
        <Card withBorder padding={0}>
          <ScrollTable minWidth={640} label={t('page.locations')}>
            <Table striped highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('col.name')}</Table.Th>
                  <Table.Th>{t('places.location.code')}</Table.Th>
                  <Table.Th>{t('places.location.city')}</Table.Th>
                  <Table.Th>{t('places.location.timezone')}</Table.Th>
                  <Table.Th>{t('col.tariff')}</Table.Th>
                  <Table.Th>{t('col.actions')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((l, i) => (
                  <LocationRow
                    key={l.id}
                    location={l}
                    tariff={
                      tariffs[i]?.data
                        ? (tariffs[i]?.data?.find((x) => x.id === l.tariffId) ?? null)
                        : tariffs[i]?.isError
                          ? null
                          : undefined
                    }
                  />
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        </Card>
      )}
    </Stack>
  );
}
