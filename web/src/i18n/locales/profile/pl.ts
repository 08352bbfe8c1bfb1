/** Polish messages of the profile screen's API keys section. */
import type { profileEn } from './en.ts';

export const profilePl: Record<keyof typeof profileEn, string> = {
  'keys.title': 'Klucze API',
  'keys.intro':
    'Klucze tylko do odczytu dla Grafany i skryptów: wyślij klucz jako "Authorization: Bearer <key>". Klucz odczytuje dane Twoich urządzeń i niczego nie zmienia.',
  'keys.name': 'Nazwa klucza',
  'keys.namePlaceholder': 'np. Grafana w domu',
  'keys.create': 'Utwórz klucz',
  'keys.created': 'Utworzono',
  'keys.lastUsed': 'Ostatnio użyty',
  'keys.never': 'Nigdy',
  'keys.empty': 'Nie masz jeszcze kluczy API.',
  'keys.newTitle': 'Utworzono klucz "{name}"',
  'keys.newWarning':
    'Skopiuj klucz teraz. Jest pokazywany tylko ten jeden raz i nie można go wyświetlić ponownie.',
  'keys.dismiss': 'Skopiowałem go',
  'keys.copy': 'Kopiuj',
  'keys.copied': 'Skopiowano',
  'keys.revoke': 'Unieważnij',
  'keys.revokeTitle': 'Unieważnij klucz API',
  'keys.revokeConfirm': 'Unieważnić klucz "{name}"? Wszystko, co go używa, natychmiast przestanie działać.',
  'keys.revoked': 'Klucz został unieważniony.',
  'keys.revokeFailed': 'Nie udało się unieważnić klucza.',
  'keys.createFailed': 'Nie udało się utworzyć klucza.',
  'keys.limit': 'Masz już {max} kluczy. Unieważnij jeden, zanim utworzysz kolejny.',
  'keys.tooLong': 'Użyj co najwyżej {max} znaków.',
};
