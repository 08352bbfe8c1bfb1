/**
 * Adding a meter (docs/api.md §Devices): type, name, MAC and location → the device is claimed → how to
 * connect it (broker, account, topics, ready-to-paste settings for native JSON, Tasmota and Shelly) →
 * the first reading, watched live over the hub and the connection endpoint.
 */
import { type ClaimedDevice, DEVICE_TYPES, deviceKeyFromMac, MESSAGES } from '@kilowatch/core';
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  CopyButton,
  Group,
  Loader,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { type FormEvent, type ReactNode, useMemo, useState } from 'react';
import { ApiError } from '../../api/client.ts';
import { useClaimDevice } from '../../api/devices/claim-device.ts';
import { useConnection } from '../../api/devices/connection.ts';
import { useLocations } from '../../api/locations/get-locations.ts';
import { useLatest } from '../../api/telemetry/get-latest.ts';
import { displayTimeZone } from '../../auth/session.ts';
import { formatValue } from '../../charts/options.ts';
import { useLiveDevices } from '../../hub/live.tsx';
import { type MessageId, translateServerMessage, useT } from '../../i18n/i18n.ts';
import { notifyOutcome } from '../../lib/notify.ts';
import { formatInstant } from '../../lib/time.ts';
import { paramLabel } from '../../shared/devices/paramNames.ts';
import { detailsPath } from '../../shared/devices/paths.ts';
import {
  type BrokerSettings,
  defaultTopics,
  nativeCommand,
  nativeExample,
  shellyCommand,
  shellyConfig,
  tasmotaCommand,
} from './connectionSettings.ts';

interface TypeChoice {
  key: keyof typeof DEVICE_TYPES;
  code: number;
  phases: 1 | 3;
}

const TYPE_CHOICES: readonly TypeChoice[] = [
  { key: 'threePhase', code: DEVICE_TYPES.threePhase.code, phases: 3 },
  { key: 'singlePhase', code: DEVICE_TYPES.singlePhase.code, phases: 1 },
  { key: 'solar', code: DEVICE_TYPES.solar.code, phases: 3 },
  { key: 'energy', code: DEVICE_TYPES.energy.code, phases: 3 },
  { key: 'energyBidirectional', code: DEVICE_TYPES.energyBidirectional.code, phases: 3 },
  { key: 'thermostat', code: DEVICE_TYPES.thermostat.code, phases: 3 },
];

/** Example values a meter of this type reports, for the native payload. */
function exampleValues(choice: TypeChoice): Record<string, number> {
  if (choice.code === DEVICE_TYPES.thermostat.code) return { tempmain: 21.5, tempset: 22 };
  if (choice.phases === 1) return { vave1: 231.2, iave1: 1.8, pave1: 402, eai1: 1523.4 };
  return { vave1: 231.2, vave2: 229.8, vave3: 230.4, pave1: 402, pave2: 310, pave3: 95 };
}

function fieldErrors(err: unknown): Record<string, string> {
  if (!(err instanceof ApiError)) return {};
  return Object.fromEntries(
    Object.entries(err.errors).map(([k, msgs]) => [k, msgs.map(translateServerMessage).join(' ')]),
  );
}

function ClaimForm({ onClaimed }: { onClaimed: (d: ClaimedDevice, type: TypeChoice) => void }) {
  const { t } = useT();
  const locations = useLocations();
  const claim = useClaimDevice();
  const [type, setType] = useState<string>(String(TYPE_CHOICES[0]!.code));
  const [name, setName] = useState('');
  const [mac, setMac] = useState('');
  const [locationId, setLocationId] = useState<string | null>(null);
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const [server, setServer] = useState<Record<string, string>>({});
  // Another account's meter holds this MAC's stock Tasmota name: the meter must publish under its
  // device key instead, and is claimed without the stock topics once its owner says it does.
  const [stockTaken, setStockTaken] = useState(false);
  const [ownTopic, setOwnTopic] = useState(false);
  const choice = TYPE_CHOICES.find((c) => String(c.code) === type) ?? TYPE_CHOICES[0]!;
  const deviceKey = deviceKeyFromMac(mac);
  const macOk = deviceKey !== null;
  const errors = {
    name: touched.name && !name.trim() ? t('val.required') : server.name,
    mac: touched.mac && !macOk ? t('add.val.mac') : server.mac,
    type: server.typeCode ?? server.phases,
    location: server.locationId,
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ name: true, mac: true });
    if (!name.trim() || !macOk) return;
    try {
      const device = await claim.mutateAsync({
        mac: mac.trim(),
        name: name.trim(),
        typeCode: choice.code,
        phases: choice.phases,
        locationId: locationId === null ? null : Number(locationId),
        ...(stockTaken && ownTopic ? { stockTopics: false } : {}),
      });
      notifyOutcome('add-device', true, t('add.claimed', { name: device.name }));
      onClaimed(device, choice);
    } catch (err) {
      const taken = err instanceof ApiError && err.message === MESSAGES.stockTopicTaken;
      setStockTaken(taken);
      setServer(taken ? {} : fieldErrors(err));
      if (taken) return;
      notifyOutcome(
        'add-device',
        false,
        err instanceof ApiError ? translateServerMessage(err.message) : t('msg.saveFailed'),
      );
    }
  };
  const clear = (k: string) =>
    setServer((s) => (k in s ? Object.fromEntries(Object.entries(s).filter(([x]) => x !== k)) : s));
  return (
    <Card withBorder maw={640} component="form" onSubmit={submit} noValidate data-testid="add-device-form">
      <Stack gap="sm">
        <Text size="sm" c="dimmed">
          {t('add.intro')}
        </Text>
        <Select
          label={t('add.type')}
          data={TYPE_CHOICES.map((c) => ({
            value: String(c.code),
            label: t(`devtype.${c.code}` as MessageId),
          }))}
          value={type}
          onChange={(v) => {
            if (v) setType(v);
            clear('typeCode');
          }}
          allowDeselect={false}
          error={errors.type}
          data-testid="add-type"
        />
        <TextInput
          label={t('add.name')}
          value={name}
          onChange={(e) => {
            setName(e.currentTarget.value);
            clear('name');
          }}
          onBlur={() => setTouched((s) => ({ ...s, name: true }))}
          error={errors.name}
          required
          data-testid="add-name"
        />
        <TextInput
          label={t('add.mac')}
          description={t('add.macHint')}
          value={mac}
          onChange={(e) => {
            setMac(e.currentTarget.value);
            clear('mac');
            setStockTaken(false);
            setOwnTopic(false);
          }}
          onBlur={() => setTouched((s) => ({ ...s, mac: true }))}
          error={errors.mac}
          required
          autoComplete="off"
          spellCheck={false}
          data-testid="add-mac"
        />
        {stockTaken && deviceKey && (
          <Alert color="yellow" data-testid="add-stock-taken">
            <Stack gap="xs">
              <Text size="sm">
                {t('add.stockTaken', { suffix: deviceKey.slice(-6).toUpperCase(), key: deviceKey })}
              </Text>
              <Checkbox
                label={t('add.ownTopic', { key: deviceKey })}
                checked={ownTopic}
                onChange={(e) => setOwnTopic(e.currentTarget.checked)}
                data-testid="add-own-topic"
              />
            </Stack>
          </Alert>
        )}
        <Select
          label={t('add.location')}
          data={(locations.data ?? []).map((l) => ({ value: String(l.id), label: l.name }))}
          value={locationId}
          onChange={(v) => {
            setLocationId(v);
            clear('locationId');
          }}
          placeholder={t('edit.noLocation')}
          clearable
          clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${t('add.location')}` }}
          error={errors.location}
          data-testid="add-location"
        />
        <Group justify="flex-end">
          <Button variant="default" component={Link} to="/dashboard">
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={claim.isPending} data-testid="add-claim">
            {t('add.claim')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function Copyable({ value, testId, label }: { value: string; testId: string; label: string }) {
  const { t } = useT();
  return (
    <Group gap="xs" wrap="nowrap" miw={0}>
      <Code data-testid={testId} style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button size="compact-xs" variant="subtle" onClick={copy} aria-label={`${t('add.copy')}: ${label}`}>
            {copied ? t('add.copied') : t('add.copy')}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}

function Snippet({ value, testId, label }: { value: string; testId: string; label: string }) {
  const { t } = useT();
  return (
    <Stack gap={4}>
      <Code block data-testid={testId} style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button
            size="compact-xs"
            variant="light"
            onClick={copy}
            w="fit-content"
            aria-label={`${t('add.copy')}: ${label}`}
          >
            {copied ? t('add.copied') : t('add.copy')}
          </Button>
        )}
      </CopyButton>
    </Stack>
  );
}

/** The broker settings of a claimed meter: the claim's `mqtt` block, or this server's address and the topics. */
export function brokerSettings(device: ClaimedDevice, hostname: string): BrokerSettings {
  const key = device.deviceKey ?? deviceKeyFromMac(device.mac ?? '') ?? '';
  const fallback = defaultTopics(key);
  const m = device.mqtt;
  return {
    host: m?.host || hostname,
    port: m?.port ?? 1883,
    tls: m?.tls ?? false,
    username: m?.username ?? null,
    password: m?.password ?? null,
    deviceKey: key,
    topics: {
      native: m?.topics?.native ?? fallback.native,
      tasmota: m?.topics?.tasmota ?? fallback.tasmota,
      shelly: m?.topics?.shelly ?? fallback.shelly,
    },
  };
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={160} style={{ verticalAlign: 'top' }}>
        {label}
      </Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

function ConnectPanel({ device, type }: { device: ClaimedDevice; type: TypeChoice }) {
  const { t } = useT();
  const s = useMemo(() => brokerSettings(device, globalThis.location?.hostname ?? 'localhost'), [device]);
  const payload = useMemo(() => nativeExample(exampleValues(type), Date.now()), [type]);
  const shelly = shellyConfig(s);
  return (
    <Card withBorder data-testid="connect-panel">
      <Stack gap="sm">
        <Title order={2} fz="h4">
          {t('add.connectTitle')}
        </Title>
        <Text size="sm">{t('add.connectIntro')}</Text>
        <Table.ScrollContainer minWidth={0}>
          <Table withRowBorders={false} verticalSpacing={4}>
            <Table.Tbody>
              <Row label={t('add.broker')}>
                <Copyable value={s.host} testId="conn-host" label={t('add.broker')} />
              </Row>
              <Row label={t('add.port')}>
                <Group gap="xs">
                  <Copyable value={String(s.port)} testId="conn-port" label={t('add.port')} />
                  {s.tls && <Badge variant="light">{t('add.tls')}</Badge>}
                </Group>
              </Row>
              {s.username !== null && (
                <Row label={t('add.username')}>
                  <Copyable value={s.username} testId="conn-username" label={t('add.username')} />
                </Row>
              )}
              {s.password !== null && (
                <Row label={t('add.password')}>
                  <Group gap="xs">
                    <Copyable value={s.password} testId="conn-password" label={t('add.password')} />
                    <Badge color="orange" variant="light">
                      {t('add.passwordOnce')}
                    </Badge>
                  </Group>
                </Row>
              )}
              <Row label={t('add.topic')}>
                <Copyable value={s.topics.native} testId="conn-topic" label={t('add.topic')} />
              </Row>
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        {s.username === null && (
          <Text size="sm" c="dimmed" data-testid="conn-anonymous">
            {t('add.noCredentials')}
          </Text>
        )}
        <Tabs defaultValue="native" keepMounted={false}>
          <Tabs.List>
            <Tabs.Tab value="native">{t('add.format.native')}</Tabs.Tab>
            <Tabs.Tab value="tasmota">{t('add.format.tasmota')}</Tabs.Tab>
            <Tabs.Tab value="shelly">{t('add.format.shelly')}</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="native" pt="sm">
            <Stack gap="xs">
              <Text size="sm">{t('add.nativeHelp')}</Text>
              <Snippet value={payload} testId="conn-native-payload" label={t('add.format.native')} />
              <Snippet value={nativeCommand(s, payload)} testId="conn-native-command" label="mosquitto_pub" />
            </Stack>
          </Tabs.Panel>
          <Tabs.Panel value="tasmota" pt="sm">
            <Stack gap="xs">
              <Text size="sm">{t('add.tasmotaHelp')}</Text>
              <Snippet value={tasmotaCommand(s)} testId="conn-tasmota" label={t('add.format.tasmota')} />
              <Text size="xs" c="dimmed">
                {t('add.topic')}: <Code>{s.topics.tasmota}</Code>
              </Text>
            </Stack>
          </Tabs.Panel>
          <Tabs.Panel value="shelly" pt="sm">
            <Stack gap="xs">
              <Text size="sm">{t('add.shellyHelp')}</Text>
              <Snippet value={shellyCommand(s)} testId="conn-shelly" label={t('add.format.shelly')} />
              <Text size="xs" c="dimmed">
                {t('add.shellyManual', {
                  server: String(shelly.server),
                  prefix: String(shelly.topic_prefix),
                })}
              </Text>
            </Stack>
          </Tabs.Panel>
        </Tabs>
      </Stack>
    </Card>
  );
}

function toMs(x: string | number | null | undefined): number | null {
  if (x === null || x === undefined) return null;
  const ms = typeof x === 'number' ? x : Date.parse(x.includes('T') ? x : `${x.replace(' ', 'T')}Z`);
  return Number.isFinite(ms) ? ms : null;
}

function FirstReading({ device, claimedAt }: { device: ClaimedDevice; claimedAt: number }) {
  const { t, locale } = useT();
  const tz = displayTimeZone();
  const id = String(device.id);
  useLiveDevices(useMemo(() => [id], [id]));
  // Readings pushed by the hub land in this query; polling covers a hub that is reconnecting.
  const latest = useLatest(id);
  const readAt = toMs(latest.data?.ts);
  const connection = useConnection(id, readAt === null);
  const arrivedAt = readAt ?? toMs(connection.data?.lastReadingAt);
  const rejection = connection.data?.lastRejection;
  const rejectedAt = toMs(rejection?.at);
  const rejected = rejection && (rejectedAt === null || rejectedAt >= claimedAt - 60_000) ? rejection : null;
  const values = Object.entries(latest.data?.values ?? {}).filter(([, v]) => v !== null);
  return (
    <Card withBorder data-testid="first-reading">
      <Stack gap="sm">
        {arrivedAt !== null ? (
          <Alert color="green" data-testid="add-arrived" role="status">
            {t('add.arrived', { time: formatInstant(arrivedAt, tz, locale, 'second') })}
          </Alert>
        ) : (
          <Group gap="sm" role="status" data-testid="add-waiting">
            <Loader size="sm" />
            <Text>{connection.data?.connected ? t('add.connected') : t('add.waiting')}</Text>
          </Group>
        )}
        {rejected && arrivedAt === null && (
          <Alert color="red" data-testid="add-rejected" role="alert">
            {t('add.rejected', {
              reason: rejected.topic ? `${rejected.reason} (${rejected.topic})` : rejected.reason,
            })}
          </Alert>
        )}
        {arrivedAt !== null && values.length > 0 && (
          <Stack gap={4}>
            <Text size="sm" fw={600}>
              {t('add.lastValues')}
            </Text>
            <SimpleGrid cols={{ base: 1, xs: 2, sm: 3 }} spacing="xs">
              {values.slice(0, 12).map(([param, v]) => (
                <Text size="sm" key={param} data-testid={`first-${param}`}>
                  {paramLabel(t, param)}: <b>{formatValue(v, '')}</b>
                </Text>
              ))}
            </SimpleGrid>
          </Stack>
        )}
        <Group>
          <Button component={Link} to={detailsPath(device)} data-testid="add-open-device">
            {t('add.openDevice')}
          </Button>
          <Anchor component={Link} to="/device/add" reloadDocument>
            {t('add.another')}
          </Anchor>
        </Group>
      </Stack>
    </Card>
  );
}

export default function AddDevicePage() {
  const { t } = useT();
  const [claimed, setClaimed] = useState<{ device: ClaimedDevice; type: TypeChoice; at: number } | null>(
    null,
  );
  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {claimed ? `${t('add.title')}: ${claimed.device.name}` : t('add.title')}
      </Title>
      {claimed ? (
        <>
          <ConnectPanel device={claimed.device} type={claimed.type} />
          <FirstReading device={claimed.device} claimedAt={claimed.at} />
        </>
      ) : (
        <ClaimForm onClaimed={(device, type) => setClaimed({ device, type, at: Date.now() })} />
      )}
    </Stack>
  );
}
