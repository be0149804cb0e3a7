import { describe, expect, it } from 'vitest';
import { asDeviceType, deviceType } from '../../engine/reports/device-type.js';

// Real User-Agent strings, as the browsers and probes send them.
const UA = {
  iphoneSafari: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  iphoneCnaSheet: 'Mozilla/5.0 (iPhone; CPU iPhone OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  ipadDesktopMode: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  macSafari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  macChrome: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  appleProbe: 'CaptiveNetworkSupport-443.0.1 wispr',
  androidChrome: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  androidWebView: 'Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230805.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36',
  androidDalvik: 'Dalvik/2.1.0 (Linux; U; Android 14; SM-S918B Build/UP1A.231005.007)',
  windowsEdge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0',
  windowsFirefox: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  windowsProbe: 'Microsoft NCSI',
  linuxFirefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  chromeOs: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
};

describe('deviceType', () => {
  it.each([
    ['iphoneSafari', 'ios'], ['iphoneCnaSheet', 'ios'], ['ipadDesktopMode', 'ios'],
    ['macSafari', 'macos'], ['macChrome', 'macos'],
    ['androidChrome', 'android'], ['androidWebView', 'android'], ['androidDalvik', 'android'],
    ['windowsEdge', 'windows'], ['windowsFirefox', 'windows'], ['windowsProbe', 'windows'],
    ['appleProbe', 'other'], ['linuxFirefox', 'other'], ['chromeOs', 'other'],
  ] as const)('%s is %s', (name, want) => {
    expect(deviceType({ userAgent: UA[name] })).toBe(want);
  });

  it('takes a recognised Sec-CH-UA-Platform over the (reduced) User-Agent', () => {
    // Chromium's reduced UA on Android says "Android 10; K" whatever the release; the hint is exact.
    expect(deviceType({ userAgent: UA.linuxFirefox, platform: '"Android"' })).toBe('android');
    expect(deviceType({ userAgent: UA.androidChrome, platform: '"Windows"' })).toBe('windows');
    expect(deviceType({ userAgent: UA.windowsEdge, platform: '"macOS"' })).toBe('macos');
    // An unknown hint ("Linux", "Chrome OS") leaves the User-Agent to decide.
    expect(deviceType({ userAgent: UA.windowsEdge, platform: '"Linux"' })).toBe('windows');
  });

  it('is other with no browser at all (a RADIUS-only sign-in) or an empty header', () => {
    expect(deviceType({})).toBe('other');
    expect(deviceType({ userAgent: '', platform: '' })).toBe('other');
  });

  it('reads only the head of an absurdly long header', () => {
    expect(deviceType({ userAgent: 'x'.repeat(10_000) + ' iPhone' })).toBe('other');
    expect(deviceType({ userAgent: UA.iphoneSafari + 'x'.repeat(10_000) })).toBe('ios');
  });

  it('asDeviceType maps anything unknown to other', () => {
    expect(asDeviceType('ios')).toBe('ios');
    expect(asDeviceType(null)).toBe('other');
    expect(asDeviceType('linux')).toBe('other');
  });
});
