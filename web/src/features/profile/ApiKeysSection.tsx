/**
 * The profile screen's API keys (docs/api.md §Account): the list of the user's read-only keys, a form that
 * creates a named key and shows it once, and revocation after a confirmation.
 */
import { API_KEY_NAME_MAX, API_KEYS_MAX, type ApiKey, type CreatedApiKey } from '@kilowatch/core';
import {
  Alert,
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  Skeleton,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useApiKeys, useCreateApiKey, useRevokeApiKey } from '../../api/account/api-keys.ts';
import { ApiError } from '../../api/client.ts';
import { translateServerMessage, useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { formatInstant } from '../../lib/time.ts';
import { ConfirmDelete } from '../../shared/ui/ConfirmDelete.tsx';
import { ErrorState } from '../../shared/ui/RouteStates.tsx';
import { ScrollTable } from '../../shared/ui/ScrollTable.tsx';

type Translate = ReturnType<typeof useT>['t'];

/** What a failed create or revoke says: the key limit by name, else the server's (translated) message. */
function failureMessage(t: Translate, err: unknown, fallback: string): string {
  if (err instanceof ApiError && err.status === 409) return t('keys.limit', { max: API_KEYS_MAX });
  if (err instanceof ApiError && err.status !== 0 && err.status < 500) {
    const field = Object.values(err.errors)[0]?.[0];
    return `${fallback} ${translateServerMessage(field ?? err.message)}`;
  }
  return err instanceof ApiError && err.status === 0 ? `${fallback} ${t('msg.weakSignal')}` : fallback;
}

function NewKey({ created, onDismiss }: { created: CreatedApiKey; onDismiss: () => void }) {
  const { t } = useT();
  return (
    <Alert
      color="yellow"
      variant="light"
      title={t('keys.newTitle', { name: created.name })}
      data-testid="api-key-new"
      role="status"
      styles={{ title: { color: 'var(--mantine-color-text)' } }}
    >
      <Stack gap="xs">
        <Text size="sm">{t('keys.newWarning')}</Text>
        <Group gap="xs" wrap="nowrap" miw={0}>
          <Code data-testid="api-key-secret" style={{ overflowWrap: 'anywhere', whiteSpace: 'pre-wrap' }}>
            {created.key}
          </Code>
          <CopyButton value={created.key}>
            {({ copied, copy }) => (
              <Button
                size="compact-xs"
                variant="light"
                onClick={copy}
                aria-label={`${t('keys.copy')}: ${created.name}`}
              >
                {copied ? t('keys.copied') : t('keys.copy')}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Group justify="flex-end">
          <Button size="xs" variant="default" onClick={onDismiss} data-testid="api-key-dismiss">
            {t('keys.dismiss')}
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}

function KeyRow({ apiKey, zone }: { apiKey: ApiKey; zone: string }) {
  const { t, locale } = useT();
  const revoke = useRevokeApiKey();
  const confirm = async () => {
    try {
      await revoke.mutateAsync(apiKey.id);
      notify({ color: 'green', message: t('keys.revoked') });
      return true;
    } catch (err) {
      notify({ color: 'red', message: failureMessage(t, err, t('keys.revokeFailed')) });
      return false;
    }
  };
  return (
    <Table.Tr data-testid="api-key-row">
      <Table.Td>{apiKey.name}</Table.Td>
      <Table.Td>{formatInstant(Date.parse(apiKey.createdAt), zone, locale)}</Table.Td>
      <Table.Td>
        {apiKey.lastUsedAt === null ? (
          <Text c="dimmed" size="sm">
            {t('keys.never')}
          </Text>
        ) : (
          formatInstant(Date.parse(apiKey.lastUsedAt), zone, locale)
        )}
      </Table.Td>
      <Table.Td>
        <ConfirmDelete
          label={`${t('keys.revoke')}: ${apiKey.name}`}
          action={t('keys.revoke')}
          title={t('keys.revokeTitle')}
          question={t('keys.revokeConfirm', { name: apiKey.name })}
          onConfirm={confirm}
          pending={revoke.isPending}
          testId="api-key-revoke"
        />
      </Table.Td>
    </Table.Tr>
  );
}

export function ApiKeysSection({ zone }: { zone: string }) {
  const { t } = useT();
  const keys = useApiKeys();
  const create = useCreateApiKey();
  const [name, setName] = useState('');
  const [touched, setTouched] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const trimmed = name.trim();
  const nameError =
    trimmed === ''
      ? t('val.required')
      : trimmed.length > API_KEY_NAME_MAX
        ? t('keys.tooLong', { max: API_KEY_NAME_MAX })
        : undefined;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    setFailure(null);
    if (nameError) return;
    try {
      setCreated(await create.mutateAsync({ name: trimmed }));
      setName('');
      setTouched(false);
    } catch (err) {
      setFailure(failureMessage(t, err, t('keys.createFailed')));
    }
  };

  const list = keys.data ?? [];
  return (
    <Card withBorder maw={960} data-testid="api-keys">
      <Stack gap="sm">
        <Title order={2} fz="h4">
          {t('keys.title')}
        </Title>
        <Text size="sm" c="dimmed">
          {t('keys.intro')}
        </Text>
        {created && <NewKey created={created} onDismiss={() => setCreated(null)} />}
        <form onSubmit={submit} noValidate>
          <Group align="flex-start" wrap="wrap">
            <TextInput
              label={t('keys.name')}
              placeholder={t('keys.namePlaceholder')}
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              onBlur={() => name !== '' && setTouched(true)}
              error={touched ? nameError : undefined}
              maxLength={API_KEY_NAME_MAX + 20}
              required
              miw={240}
              data-testid="api-key-name"
            />
            <Button type="submit" mt={25} loading={create.isPending} data-testid="api-key-create">
              {t('keys.create')}
            </Button>
          </Group>
        </form>
        {failure && (
          <Alert color="red" role="alert" data-testid="api-key-error">
            {failure}
          </Alert>
        )}
        {keys.isPending ? (
          <Skeleton height={80} />
        ) : keys.isError && keys.data === undefined ? (
          <ErrorState error={keys.error} onRetry={() => void keys.refetch()} />
        ) : list.length === 0 ? (
          <Text c="dimmed" size="sm" data-testid="api-keys-empty">
            {t('keys.empty')}
          </Text>
        ) : (
          <ScrollTable minWidth={520} label={t('keys.title')}>
            <Table striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('col.name')}</Table.Th>
                  <Table.Th>{t('keys.created')}</Table.Th>
                  <Table.Th>{t('keys.lastUsed')}</Table.Th>
                  <Table.Th>{t('col.actions')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((k) => (
                  <KeyRow key={k.id} apiKey={k} zone={zone} />
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        )}
      </Stack>
    </Card>
  );
}
