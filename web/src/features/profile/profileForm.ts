/** Profile form (docs/spec.md §2 Profile, §5): checks and the request body of POST /api/account/update. */
import type { UpdateUserRequest } from '@kilowatch/core';
import { LANGUAGES, type Language } from '../../i18n/i18n.ts';
import { type FormErrors, requiredText, timeZoneError, withoutEmpty } from '../../shared/forms/fields.ts';

export interface ProfileValues {
  fullName: string;
  country: string | null;
  timezone: string | null;
  language: Language;
}

export type ProfileField = keyof ProfileValues;

export function validateProfile(v: ProfileValues): FormErrors<ProfileField> {
  return withoutEmpty<ProfileField>({
    fullName: requiredText(v.fullName, 200),
    country: v.country?.trim() ? undefined : { id: 'val.country' },
    timezone: timeZoneError(v.timezone),
    language: (LANGUAGES as readonly string[]).includes(v.language) ? undefined : { id: 'val.required' },
  });
}

export function profileRequest(v: ProfileValues): UpdateUserRequest {
  return {
    fullName: v.fullName.trim(),
    country: v.country?.trim() ?? '',
    timezone: v.timezone ?? '',
    language: v.language,
  };
}

/** ISO 3166-1 alpha-2 codes offered by the country select (names come from Intl.DisplayNames). */
export const COUNTRY_CODES =
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'.split(
    ' ',
  );

/** Country options named in the interface language, sorted by name; an unknown stored value stays. */
export function countryOptions(locale: string, current?: string | null): { value: string; label: string }[] {
  let names: Intl.DisplayNames | null = null;
  try {
    names = new Intl.DisplayNames([locale], { type: 'region' });
  } catch {
    names = null;
  }
  const codes = current && !COUNTRY_CODES.includes(current) ? [current, ...COUNTRY_CODES] : COUNTRY_CODES;
  return codes
    .map((code) => ({ value: code, label: `${regionName(names, code)} (${code})` }))
    .sort((a, b) => a.label.localeCompare(b.label, locale));
}

function regionName(names: Intl.DisplayNames | null, code: string): string {
  try {
    return names?.of(code) ?? code;
  } catch {
    return code;
  }
}
