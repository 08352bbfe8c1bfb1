/** Turkish messages of the profile screen's API keys section. */
import type { profileEn } from './en.ts';

export const profileTr: Record<keyof typeof profileEn, string> = {
  'keys.title': 'API anahtarları',
  'keys.intro':
    'Grafana ve betikler için salt okunur anahtarlar: anahtarı "Authorization: Bearer <key>" olarak gönderin. Anahtar cihazlarınızın verilerini okur, hiçbir şeyi değiştirmez.',
  'keys.name': 'Anahtar adı',
  'keys.namePlaceholder': 'ör. Evdeki Grafana',
  'keys.create': 'Anahtar oluştur',
  'keys.created': 'Oluşturulma',
  'keys.lastUsed': 'Son kullanım',
  'keys.never': 'Hiç',
  'keys.empty': 'Henüz API anahtarınız yok.',
  'keys.newTitle': '"{name}" anahtarı oluşturuldu',
  'keys.newWarning': 'Anahtarı şimdi kopyalayın. Yalnızca bu kez gösterilir ve bir daha gösterilemez.',
  'keys.dismiss': 'Kopyaladım',
  'keys.copy': 'Kopyala',
  'keys.copied': 'Kopyalandı',
  'keys.revoke': 'İptal et',
  'keys.revokeTitle': 'API anahtarını iptal et',
  'keys.revokeConfirm': '"{name}" anahtarı iptal edilsin mi? Onu kullanan her şey hemen çalışmayı durdurur.',
  'keys.revoked': 'Anahtar iptal edildi.',
  'keys.revokeFailed': 'Anahtar iptal edilemedi.',
  'keys.createFailed': 'Anahtar oluşturulamadı.',
  'keys.limit': 'Zaten {max} anahtarınız var. Yenisini oluşturmadan önce birini iptal edin.',
  'keys.tooLong': 'En fazla {max} karakter kullanın.',
};
