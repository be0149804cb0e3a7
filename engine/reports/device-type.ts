/**
 * The device types the reports count (the spec's analytics `device_types`), and `other`
 * for everything else: Linux, ChromeOS, game consoles, a RADIUS-only sign-in
 * (no browser spoke to us), a missing or unreadable User-Agent.
 */
export const DEVICE_TYPES = ['ios', 'android', 'windows', 'macos', 'other'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

/** What a browser told the portal about itself: claims, used for the device-type statistic and nothing else. */
export interface DeviceHints {
  /** The User-Agent header ('' none). */
  userAgent?: string;
  /** Sec-CH-UA-Platform, a quoted string such as `"Android"` (Chromium browsers only; '' none). */
  platform?: string;
}

/** Past this many characters a User-Agent is not read further (a real one is a few hundred). */
const UA_MAX = 512;

const HINT: Readonly<Record<string, DeviceType>> = {
  '"android"': 'android', '"ios"': 'ios', '"windows"': 'windows', '"macos"': 'macos',
};

// Order matters: an iPhone's UA says "like Mac OS X", an Android WebView's says "Linux".
const IOS = /\b(?:iPhone|iPad|iPod)\b|\biOS\b/;
const ANDROID = /\bAndroid\b|\bDalvik\//;
const WINDOWS = /\bWindows\b|\bMicrosoft NCSI\b/;
const MAC = /\bMacintosh\b|\bMac OS X\b|\bMac_PowerPC\b/;
/** iPadOS 13+ asks for desktop pages as a Mac; its in-app web views still carry the `Mobile/<build>` token a Mac never sends. */
const MOBILE_BUILD = /\bMobile\/\w+/;

/**
 * The device type of a sign-in, from the browser's own claims (never trusted
 * for anything but this statistic: a guest can send any header).
 *
 * A recognised client hint (Sec-CH-UA-Platform) wins: Chromium keeps it
 * exact while it freezes the User-Agent. Then the User-Agent:
 * - iPhone, iPad, iPod: `ios`. iPadOS in desktop mode (Safari's default on
 *   iPads) sends a Mac's UA; with the `Mobile/<build>` token of its web views
 *   (the captive-network sheet among them) it is `ios`, without it it cannot
 *   be told from a Mac and counts as `macos`.
 * - Android (browsers, WebView `; wv)`, the Dalvik HTTP client of the
 *   captive-portal login app): `android`.
 * - Windows (and its `Microsoft NCSI` probe): `windows`.
 * - Macintosh: `macos`.
 * - Apple's captive-network probe alone (`CaptiveNetworkSupport-… wispr`) is
 *   sent alike by iPhones and Macs: `other`, never a guess.
 * A few anchored regular expressions on at most UA_MAX characters: the
 * portal's verify path pays microseconds for it.
 */
export function deviceType(h: DeviceHints): DeviceType {
  const hint = h.platform ? HINT[h.platform.trim().toLowerCase()] : undefined;
  if (hint) return hint;
  const raw = h.userAgent;
  if (!raw) return 'other';
  const ua = raw.length > UA_MAX ? raw.slice(0, UA_MAX) : raw;
  if (IOS.test(ua)) return 'ios';
  if (ANDROID.test(ua)) return 'android';
  if (WINDOWS.test(ua)) return 'windows';
  if (MAC.test(ua)) return MOBILE_BUILD.test(ua) ? 'ios' : 'macos';
  return 'other';
}

/** A stored device type as the reports count it: anything unknown (an older row, a bad value) is `other`. */
export function asDeviceType(v: string | null | undefined): DeviceType {
  return v === 'ios' || v === 'android' || v === 'windows' || v === 'macos' ? v : 'other';
}
