/**
 * The sponsor's e-mail, in Turkish and English in one message (the service
 * cannot know the sponsor's language; the guest's may not be theirs). Plain
 * text: the links are the only thing to act on, and they only open a page
 * (a mail scanner that follows them changes nothing: deciding is a POST).
 */
export interface SponsorMailInput {
  guest: string;
  venue: string;
  /** The device as the tenant shows it (masked or in full). */
  device: string;
  approveUrl: string;
  rejectUrl: string;
  ttlMinutes: number;
}

/** Guest name and venue go into the text only; a header-like line break in them is flattened. */
const flat = (s: string): string => s.replace(/[\r\n\t]+/g, ' ').trim();

export function sponsorMail(m: SponsorMailInput): { subject: string; text: string } {
  const guest = flat(m.guest);
  const venue = flat(m.venue);
  return {
    subject: `Wi-Fi onayı / Wi-Fi approval: ${guest}`,
    text: [
      `${guest}, ${venue} Wi-Fi ağına bağlanmak için onayınızı istiyor (cihaz ${m.device}).`,
      '',
      `Onaylamak ve süreyi seçmek için: ${m.approveUrl}`,
      `Reddetmek için: ${m.rejectUrl}`,
      '',
      `Bağlantılar ${m.ttlMinutes} dakika geçerlidir ve bir kez kullanılabilir. Bu kişiyi tanımıyorsanız isteği reddedin.`,
      '',
      '----',
      '',
      `${guest} asks for your approval to use the Wi-Fi at ${venue} (device ${m.device}).`,
      '',
      `To approve and choose for how long: ${m.approveUrl}`,
      `To reject: ${m.rejectUrl}`,
      '',
      `The links work for ${m.ttlMinutes} minutes and only once. If you do not know this person, reject the request.`,
      '',
    ].join('\n'),
  };
}

/** A MAC as the sponsor's page and e-mail show it: in full, or only its first and last byte. */
export function shownMac(mac: string, how: 'masked' | 'full'): string {
  if (how === 'full') return mac;
  const parts = mac.split(':');
  return parts.length === 6 ? `${parts[0]}:**:**:**:**:${parts[5]}` : mac;
}
