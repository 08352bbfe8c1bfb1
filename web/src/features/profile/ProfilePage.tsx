import type { User } from '@kilowatch/core';
import { Button, Card, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { type FormEvent, useMemo, useState } from 'react';
import { useUpdateProfile } from '../../api/account/update-profile.ts';
import { useUserInfo } from '../../api/account/user-info.ts';
import { activateLanguage, isLanguage, LANGUAGE_NAMES, LANGUAGES, useT } from '../../i18n/i18n.ts';
import { notify } from '../../lib/notify.ts';
import { timeZoneOptions } from '../../shared/forms/fields.ts';
import { ErrorState, RoutePending } from '../../shared/ui/RouteStates.tsx';
import { ApiKeysSection } from './ApiKeysSection.tsx';
import {
  countryOptions,
  type ProfileField,
  type ProfileValues,
  profileRequest,
  validateProfile,
} from './profileForm.ts';

function ProfileForm({ user }: { user: User }) {
  const { t, locale } = useT();
  const update = useUpdateProfile();
  const [values, setValues] = useState<ProfileValues>(() => ({
    fullName: user.fullName ?? '',
    country: user.country || null,
    timezone: user.timezone || null,
    language: isLanguage(user.language) ? user.language : locale,
  }));
  const [touched, setTouched] = useState<Partial<Record<ProfileField, boolean>>>({});
  const errors = validateProfile(values);
  const zones = useMemo(() => timeZoneOptions(values.timezone), [values.timezone]);
  const countries = useMemo(() => countryOptions(locale, values.country), [locale, values.country]);

  const set = <K extends ProfileField>(k: K, v: ProfileValues[K]) => {
    setValues((s) => ({ ...s, [k]: v }));
    setTouched((s) => ({ ...s, [k]: true }));
  };
  const blur = (k: ProfileField) => () => setTouched((s) => ({ ...s, [k]: true }));
  const err = (k: ProfileField) => {
    const e = touched[k] ? errors[k] : undefined;
    return e ? t(e.id, e.values) : undefined;
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTouched({ fullName: true, country: true, timezone: true, language: true });
    if (Object.keys(errors).length) {
      notify({ color: 'red', message: t('msg.saveFailed') });
      return;
    }
    try {
      // The session's profile and display zone are replaced by the answer (update-profile.ts).
      const saved = await update.mutateAsync(profileRequest(values));
      if (isLanguage(saved.language) && saved.language !== locale) await activateLanguage(saved.language);
      notify({ color: 'green', message: t('msg.saved') });
    } catch {
      notify({ color: 'red', message: t('msg.saveFailed') });
    }
  };

  return (
    <Card withBorder maw={640} component="form" onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Select
          label={t('lang.label')}
          data={LANGUAGES.map((l) => ({ value: l, label: LANGUAGE_NAMES[l] }))}
          value={values.language}
          onChange={(v) => isLanguage(v) && set('language', v)}
          allowDeselect={false}
          data-testid="profile-language"
        />
        <TextInput
          label={t('signIn.email')}
          value={user.email}
          readOnly
          variant="filled"
          data-testid="profile-email"
        />
        <TextInput
          label={t('signUp.fullName')}
          value={values.fullName}
          onChange={(e) => set('fullName', e.currentTarget.value)}
          onBlur={blur('fullName')}
          error={err('fullName')}
          required
          data-testid="profile-fullName"
        />
        <Select
          label={t('places.profile.country')}
          data={countries}
          value={values.country}
          onChange={(v) => set('country', v)}
          // Emptying the text clears the value, so the field can be left empty from the keyboard.
          onSearchChange={(q) => q === '' && values.country !== null && set('country', null)}
          onBlur={blur('country')}
          error={err('country')}
          searchable
          clearable
          allowDeselect={false}
          clearButtonProps={{ 'aria-label': `${t('places.clear')}: ${t('places.profile.country')}` }}
          nothingFoundMessage={t('places.nothingFound')}
          required
          data-testid="profile-country"
        />
        <Select
          label={t('places.location.timezone')}
          data={zones}
          value={values.timezone}
          onChange={(v) => set('timezone', v)}
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
          data-testid="profile-timezone"
        />
        <Text size="xs" c="dimmed">
          {t('places.profile.hint')}
        </Text>
        <Group justify="flex-end">
          <Button type="submit" loading={update.isPending} data-testid="save-profile">
            {t('common.save')}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

export default function ProfilePage() {
  const { t } = useT();
  const user = useUserInfo();
  return (
    <Stack gap="md">
      <Title order={1} fz="h2">
        {t('page.profile')}
      </Title>
      {user.isPending ? (
        <RoutePending />
      ) : user.isError && user.data === undefined ? (
        <ErrorState error={user.error} onRetry={() => void user.refetch()} />
      ) : (
        <>
          <ProfileForm key={String(user.data.id)} user={user.data} />
          <ApiKeysSection zone={user.data.timezone || 'UTC'} />
        </>
      )}
    </Stack>
  );
}
