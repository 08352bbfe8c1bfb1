import type { Device } from '@kilowatch/core';
import { ActionIcon, Button, Group, Select, Stack, Switch, Text, TextInput } from '@mantine/core';
import { type FormEvent, useMemo, useRef, useState } from 'react';
import type { Comparison, ComparisonRequest } from '../../api/analytics/comparisons.ts';
import { ApiError } from '../../api/client.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { paramsForDevice } from '../../shared/devices/measuredParams.ts';
import { paramSelectData } from '../../shared/devices/paramNames.ts';
import { type ComparisonDraft, type MemberDraft, toRequest, validateDraft } from './comparisonForm.ts';
import { HEATMAP_PARAMS } from './heatmapScale.ts';

export function draftOf(c: Comparison | null): ComparisonDraft {
  return {
    name: c?.name ?? '',
    members: (c?.members ?? []).map((m, key) => ({ key, deviceId: m.deviceId, param: m.param })),
    grouped: c?.grouped ?? true,
  };
}

export function ComparisonForm({
  initial,
  devices,
  saving,
  onSave,
  onCancel,
}: {
  initial: Comparison | null;
  devices: readonly Device[];
  saving: boolean;
  onSave: (body: ComparisonRequest) => Promise<void>;
  onCancel: () => void;
}) {
  const { t } = useT();
  const byId = useMemo(() => new Map(devices.map((d) => [Number(d.id), d])), [devices]);
  // Per device, what its type measures (and the parameter already chosen for it).
  const paramOptionsFor = (deviceId: number | null, chosen: string | null) =>
    paramSelectData(
      t,
      paramsForDevice(HEATMAP_PARAMS, deviceId === null ? undefined : byId.get(deviceId), [chosen]),
    );
  /** The parameter kept when a row's device changes: the chosen one if it measures it, else its first. */
  const paramAfterDeviceChange = (deviceId: number | null, param: string | null) => {
    const offered = paramsForDevice(HEATMAP_PARAMS, deviceId === null ? undefined : byId.get(deviceId));
    return param !== null && offered.includes(param) ? param : (offered[0] ?? null);
  };
  const [draft, setDraft] = useState<ComparisonDraft>(() => draftOf(initial));
  const [touched, setTouched] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string[]>>({});
  const nextKey = useRef(draft.members.length);
  const errors = touched ? validateDraft(draft) : {};
  const deviceOptions = devices.map((d) => ({ value: String(d.id), label: d.name }));

  const setMember = (key: number, patch: Partial<MemberDraft>) =>
    setDraft((d) => ({ ...d, members: d.members.map((m) => (m.key === key ? { ...m, ...patch } : m)) }));
  const addMember = () =>
    setDraft((d) => ({
      ...d,
      members: [
        ...d.members,
        {
          key: nextKey.current++,
          deviceId: devices[0] ? Number(devices[0].id) : null,
          param: paramAfterDeviceChange(devices[0] ? Number(devices[0].id) : null, 'eai'),
        },
      ],
    }));
  const removeMember = (key: number) =>
    setDraft((d) => ({ ...d, members: d.members.filter((m) => m.key !== key) }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setServerErrors({});
    const found = validateDraft(draft);
    if (found.name || found.members) return;
    try {
      await onSave(toRequest(draft));
    } catch (err) {
      if (err instanceof ApiError) setServerErrors(err.errors);
    }
  };
  const serverError = (field: string) => {
    const m = serverErrors[field]?.[0];
    return m ? translateServerMessage(m) : undefined;
  };

  return (
    <form onSubmit={submit} noValidate data-testid="comparison-form">
      <Stack gap="sm">
        <TextInput
          label={t('analytics.comparisonName')}
          value={draft.name}
          onChange={(e) => {
            const name = e.currentTarget.value;
            setDraft((d) => ({ ...d, name }));
          }}
          onBlur={() => setTouched(true)}
          error={errors.name ? t(errors.name) : serverError('name')}
          maxLength={60}
          data-testid="comparison-name"
          data-autofocus
        />
        <Stack gap={6}>
          <Text size="sm" fw={500}>
            {t('analytics.members')}
          </Text>
          {draft.members.length === 0 && (
            <Text size="sm" c="dimmed">
              {t('analytics.noMembers')}
            </Text>
          )}
          {draft.members.map((m, i) => (
            <Group key={m.key} gap="xs" wrap="nowrap" align="flex-end" data-testid="comparison-member">
              <Select
                label={t('analytics.memberDevice', { n: i + 1 })}
                data={deviceOptions}
                value={m.deviceId === null ? null : String(m.deviceId)}
                onChange={(v) => {
                  const deviceId = v ? Number(v) : null;
                  setMember(m.key, { deviceId, param: paramAfterDeviceChange(deviceId, m.param) });
                }}
                allowDeselect={false}
                searchable
                style={{ flex: 1, minWidth: 0 }}
                data-testid="member-device"
              />
              <Select
                label={t('analytics.memberParam', { n: i + 1 })}
                data={paramOptionsFor(m.deviceId, m.param)}
                value={m.param}
                onChange={(v) => setMember(m.key, { param: v })}
                allowDeselect={false}
                searchable
                style={{ flex: 1, minWidth: 0 }}
                data-testid="member-param"
              />
              <ActionIcon
                variant="subtle"
                color="red"
                size="lg"
                onClick={() => removeMember(m.key)}
                aria-label={t('analytics.removeMember', { n: i + 1 })}
              >
                ×
              </ActionIcon>
            </Group>
          ))}
          {(errors.members || serverError('members')) && (
            <Text size="sm" c="var(--mantine-color-error)" role="alert" data-testid="members-error">
              {errors.members ? t(errors.members) : serverError('members')}
            </Text>
          )}
          <Button
            variant="light"
            size="xs"
            onClick={addMember}
            style={{ alignSelf: 'flex-start' }}
            data-testid="add-member"
            disabled={devices.length === 0}
          >
            {t('analytics.addMember')}
          </Button>
        </Stack>
        <Switch
          label={t('analytics.grouped')}
          checked={draft.grouped}
          onChange={(e) => {
            const grouped = e.currentTarget.checked;
            setDraft((d) => ({ ...d, grouped }));
          }}
          data-testid="comparison-grouped"
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            {t('common.cancel')}
          </Button>
          <Button type="submit" loading={saving} data-testid="comparison-save">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
