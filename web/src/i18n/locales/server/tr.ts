/** Turkish server messages, merged into ../tr.ts. */
import type { serverEn } from './en.ts';

export const serverTr: Record<keyof typeof serverEn, string> = {
  'server.exportSpaceUser':
    'Dışa aktarma dosyalarınız izin verilen alanın tamamını kullanıyor. Eski dışa aktarmaları silin veya süreleri dolana kadar bekleyin.',
  'server.exportSpaceServer':
    'Dışa aktarma kullanılamıyor: sunucuda yeni dışa aktarma dosyaları için yer yok. Daha sonra tekrar deneyin.',
  'server.exportRunning': 'Dışa aktarma sürüyor; bittiğinde silinebilir.',
  'server.exportTooLarge':
    'Dışa aktarma, dışa aktarma dosyalarına ayrılan alanı aştı. Daha az cihaz veya parametre ya da daha kısa bir aralık seçin.',
  'server.passwordLength': 'Parola 8 ile 128 karakter arasında olmalıdır.',
  'server.invalidToken': 'Bağlantı geçersiz veya süresi dolmuş.',
  'server.emailTaken': 'Bu e-posta adresiyle bir hesap zaten var.',
  'server.unauthorized': 'Oturumunuz sona erdi. Lütfen tekrar giriş yapın.',
  'server.alreadyClaimed': 'Bu sayaç zaten kayıtlı.',
  'server.stockTopicTaken':
    'Başka bir hesabın sayacı bu sayacın fabrika MQTT konusunu (tasmota_ ve MAC adresinin son 6 onaltılık hanesi) zaten kullanıyor. Cihazın Topic ve MqttClient (Tasmota) ya da MQTT önekini cihaz anahtarına, yani 12 küçük onaltılık haneli MAC adresine ayarlayın ve stockTopics: false ile yeniden ekleyin.',
  'server.invalidMac': 'Geçerli bir MAC adresi girin.',
  'server.priceStart':
    'Bir fiyat çeyrek saat başında başlar (saat dilimiyle bir ISO 8601 zamanı, ör. 2026-06-10T13:15:00+02:00).',
  'server.priceRange': 'kWh başına -100 ile 100 arasında bir fiyat girin.',
  'server.pricesRequired': 'En az bir fiyat gönderin.',
  'server.tooManyPrices': 'Bir istekte çok fazla fiyat: en fazla 70176 (iki yıllık çeyrek saat).',
  'server.priceRow': 'Bir satır, virgülle ayrılmış bir başlangıç ve bir fiyat içerir.',
  'server.priceDuplicate': 'Bu başlangıç iki kez yazılmış.',
  'server.pricesFull':
    'Bu konum tutabileceği kadar fiyat tutuyor (on yıllık çeyrek saat). Önce eski fiyatları silin.',
  'server.invalidTimestamp': 'Geçerli bir zaman girin.',
  'server.tooManyRequests': 'Çok fazla deneme. Daha sonra tekrar deneyin.',
  'server.tooLarge': 'İstek çok büyük.',
  'server.malformed': 'İstek okunamadı.',
  'server.busy': 'Sunucu meşgul. Daha sonra tekrar deneyin.',
  'server.demoFull': 'Demo şu anda dolu. Daha sonra tekrar deneyin.',
  'server.sharedMeter': 'Bu simüle sayaç demoya aittir: hesabı değiştirilemez.',
  'server.invalidScheme': 'Bir mahsuplaşma seçin: yok, net-metering veya net-billing.',
  'server.installedPowerRequired':
    'Net-metering için kurulu güç kW olarak gerekir (0’ın üzerinde, en fazla 50).',
  'server.settlementSinceRequired': 'Mahsuplaşmanın başladığı günü girin.',
  'server.noSettlement':
    'Bu konumun prosumer mahsuplaşması yok. Önce konumda net-metering veya net-billing seçin.',
  'server.settlementNeedsGrid':
    'Mahsuplaşma konumun şebeke sayacından hesaplanır: cihazlarından birine şebeke bağlantısı rolünü verin.',
  'server.importRunning':
    'Bu hesap için zaten bir içe aktarma sürüyor. Bitmesini bekleyin, ardından tekrar deneyin.',
  'server.importDemoRunning':
    'Bir demo çalışma alanında zaten bir içe aktarma sürüyor. Birazdan tekrar deneyin.',
  'server.importSharedMeter': 'Bu simüle sayaç demoya ait: geçmişi değiştirilemez.',
  'server.importOnConflict': 'onConflict, keep (varsayılan) veya replace olmalıdır.',
  'server.importStillRunning': 'İçe aktarma hâlâ sürüyor; bittiğinde geri alınabilir.',
  'server.importAlreadyUndone': 'Bu içe aktarma zaten geri alındı.',
  'server.importNothingToUndo':
    'Bu içe aktarma hiçbir okuma eklemedi veya değiştirmedi: geri alınacak bir şey yok.',
  'server.importStopped': 'İçe aktarma sürerken sunucu durdu. O ana kadar yazılan okumalar geri alınabilir.',
  'server.importNoBody': 'Dosyayı istek gövdesi olarak gönderin (Content-Type text/csv veya text/plain).',
  'server.importTooManyRuns':
    'İçe aktarmanın okuma zamanları geri alma için kaydedilemeyecek kadar düzensiz (eşit aralıklı 20000 diziden fazla): geri alınamaz.',
  'server.importTooManyReplaced':
    'İçe aktarma 50000’den fazla kayıtlı okumayı değiştirdi, geri alma için saklanabilecek olandan fazla: geri alınamaz.',
  'server.importTooLarge': 'Dosya 256 MiB içe aktarma sınırından büyük (KW_IMPORT_MAX_BYTES).',
  'server.importCsvMapping':
    'Bir csv içe aktarması, mapping sorgu parametresinde bir eşleme (JSON) gerektirir.',
  'server.importLineProtocolMapping':
    'Bir line-protocol içe aktarması, mapping sorgu parametresinde bir eşleme (JSON) gerektirir.',
  'server.importMappingObject': 'Eşleme bir JSON nesnesi olmalıdır.',
  'server.importStoreFailed': 'İçe aktarma durdu: telemetri deposu veya meta veri veritabanı arızalandı.',
  'server.importRollupsFailed': 'Özetler yeniden hesaplanamadı.',
};
