import { SegmentedControl, Select, useMantineColorScheme } from '@mantine/core';
import { activateLanguage, isLanguage, LANGUAGE_NAMES, LANGUAGES, useT } from '../../i18n/i18n.ts';

export function ThemeSwitch() {
  const { t } = useT();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <SegmentedControl
      size="xs"
      aria-label={t('theme.label')}
      data-testid="theme-switch"
      value={colorScheme}
      onChange={(v) => setColorScheme(v as 'light' | 'dark' | 'auto')}
      data={[
        { value: 'light', label: t('theme.light') },
        { value: 'dark', label: t('theme.dark') },
        { value: 'auto', label: t('theme.system') },
      ]}
    />
  );
}

export function LanguageSelect() {
  const { t, locale } = useT();
  return (
    <Select
      size="xs"
      w={120}
      aria-label={t('lang.label')}
      data-testid="language-select"
      value={locale}
      allowDeselect={false}
      onChange={(v) => isLanguage(v) && void activateLanguage(v)}
      data={LANGUAGES.map((l) => ({ value: l, label: LANGUAGE_NAMES[l] }))}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
