/**
 * The location's prosumer settlement per billing period of the chosen year, this year's so far by default
 * (docs/api.md §Prosumer settlement), and its price series: how many prices it holds lately, and a CSV upload of more.
 */
import { type Location, localDateString, type SettlementAnswer, startOfLocalYear } from '@kilowatch/core';
import { Alert, Button, Card, FileButton, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMemo, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { usePrices, useUploadPrices } from '../../api/locations/prices.ts';
import { useSettlement } from '../../api/locations/settlement.ts';
import { type MessageId, translateServerMessage, useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { formatDay } from '../../lib/time.ts';
import { formatKwh, formatMoney } from '../../shared/format/amounts.ts';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';

const DAY_MS = 86_400_000;
/** Rows of a refused upload named on the screen; the rest are counted. */
const ROW_ERRORS_SHOWN = 5;

function SettlementTable({ answer }: { answer: SettlementAnswer }) {
  const { t, locale } = useT();
  const amount = (x: number) =>
    answer.unit === 'kWh' ? formatKwh(x, locale) : formatMoney(x, answer.unit, locale);
  // A period ends at the start of the next one: the last day shown is the day before.
  const day = (iso: string, end = false) =>
    formatDay(localDateString(Date.parse(iso) - (end ? 1 : 0), answer.tz), locale);
  const columns = ['credited', 'used', 'payable', 'left', 'expiring'] as const;
  return (
    <ScrollTable minWidth={640} label={t('places.settlement.title')}>
      <Table striped data-testid="settlement-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('places.settlement.period')}</Table.Th>
            {columns.map((c) => (
              <Table.Th key={c}>{t(`places.settlement.col.${c}` as MessageId)}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {answer.periods.map((p) => (
            <Table.Tr key={p.period.start}>
              <Table.Th scope="row">
                {day(p.period.start)} – {day(p.period.end, true)}
              </Table.Th>
              {columns.map((c) => (
                <Table.Td key={c}>{amount(p[c])}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </ScrollTable>
  );
}

export function SettlementCard({ location }: { location: Location }) {
  const { t } = useT();
  const scheme = location.settlement.scheme;
  const tz = location.timezone;
  const thisYear = Number(localDateString(Date.now(), tz).slice(0, 4));
  // Every year since the settlement began, newest first; a start in the future offers this year alone.
  const since = location.settlement.since;
  const firstYear = Math.min(thisYear, since ? Number(since.slice(0, 4)) : thisYear);
  const years = Array.from({ length: thisYear - firstYear + 1 }, (_, i) => String(thisYear - i));
  const [chosen, setChosen] = useState<string | null>(null);
  const year = chosen !== null && years.includes(chosen) ? Number(chosen) : thisYear;
  const range = useMemo(() => {
    const from = startOfLocalYear(Date.UTC(year, 6, 1), tz);
    const to = year === thisYear ? Date.now() : startOfLocalYear(Date.UTC(year + 1, 6, 1), tz);
    return { from, to };
  }, [year, thisYear, tz]);
  const settlement = useSettlement(String(location.id), range, scheme !== 'none');
  if (scheme === 'none') return null;
  const answer = settlement.data;
  return (
    <Card withBorder data-testid="location-settlement">
      <Stack gap="sm">
        <Group justify="space-between" align="flex-end" wrap="wrap" gap="sm">
          <Title order={2} fz="h4">
            {t('places.settlement.title')} · {t(`places.settlement.scheme.${scheme}` as MessageId)}
          </Title>
          {years.length > 1 && (
            <Select
              label={t('places.settlement.year')}
              data={years}
              value={String(year)}
              onChange={setChosen}
              allowDeselect={false}
              w={110}
              data-testid="settlement-year"
            />
          )}
        </Group>
        {settlement.isPending ? (
          <Text c="dimmed">{t('common.loading')}</Text>
        ) : settlement.isError ? (
          <ErrorState error={settlement.error} onRetry={() => void settlement.refetch()} />
        ) : answer && answer.periods.length === 0 ? (
          <Text c="dimmed">{t('common.empty')}</Text>
        ) : answer ? (
          <>
            <Text size="sm" c="dimmed" data-testid="settlement-caption">
              {answer.scheme === 'net-metering'
                ? t('places.settlement.meteringCaption', {
                    ratio: Math.round((answer.ratio ?? 0) * 100),
                    months: answer.creditMonths,
                  })
                : t('places.settlement.billingCaption', { months: answer.creditMonths })}
            </Text>
            <SettlementTable answer={answer} />
            {answer.unpriced.length > 0 && (
              <Alert color="yellow" variant="light" data-testid="settlement-unpriced">
                <Text size="sm">{t('places.settlement.unpriced', { count: answer.unpriced.length })}</Text>
              </Alert>
            )}
          </>
        ) : null}
      </Stack>
    </Card>
  );
}

export function PricesCard({ location }: { location: Location }) {
  const { t, locale } = useT();
  const id = String(location.id);
  const range = useMemo(() => {
    const to = Date.now();
    return { from: to - 30 * DAY_MS, to: to + 2 * DAY_MS };
  }, []);
  const prices = usePrices(id, range);
  const upload = useUploadPrices(id);
  const [refused, setRefused] = useState<ApiError | null>(null);
  const held = prices.data?.prices ?? [];
  const latest = held.at(-1);

  const send = async (file: File | null) => {
    if (!file) return;
    setRefused(null);
    try {
      const answer = await upload.mutateAsync(await file.text());
      notify({
        color: 'green',
        message: t('places.prices.stored', { stored: answer.stored, held: answer.held }),
      });
    } catch (err) {
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) setRefused(err);
      else notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };
  const rowErrors = refused ? Object.entries(refused.errors) : [];

  return (
    <Card withBorder data-testid="location-prices">
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap">
          <Title order={2} fz="h4">
            {t('places.prices.title')}
          </Title>
          <FileButton onChange={(f) => void send(f)} accept=".csv,text/csv">
            {(props) => (
              <Button
                {...props}
                size="xs"
                variant="light"
                loading={upload.isPending}
                data-testid="prices-upload"
              >
                {t('places.prices.upload')}
              </Button>
            )}
          </FileButton>
        </Group>
        <Text size="sm" c="dimmed">
          {t('places.prices.hint')}
        </Text>
        {prices.isError ? (
          <ErrorState error={prices.error} onRetry={() => void prices.refetch()} />
        ) : (
          <Text size="sm" data-testid="prices-held">
            {prices.isPending
              ? t('common.loading')
              : latest
                ? t('places.prices.held', {
                    count: held.length,
                    latest: formatDay(localDateString(Date.parse(latest.start), location.timezone), locale),
                  })
                : t('places.prices.none')}
          </Text>
        )}
        {refused && (
          <Alert
            color="red"
            role="alert"
            title={translateServerMessage(refused.message)}
            data-testid="prices-refused"
          >
            {rowErrors.slice(0, ROW_ERRORS_SHOWN).map(([field, messages]) => (
              <Text size="sm" key={field}>
                {field}: {messages.map(translateServerMessage).join(' ')}
              </Text>
            ))}
            {rowErrors.length > ROW_ERRORS_SHOWN && (
              <Text size="sm">
                {t('places.prices.moreErrors', { count: rowErrors.length - ROW_ERRORS_SHOWN })}
              </Text>
            )}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
