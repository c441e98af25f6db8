import { parseSettings, settingsFromConfig, toStoredSettings } from './notification-settings';

describe('notification settings', () => {
  it('are stored as text the parser gives back unchanged, with the webhook URL as its own column', () => {
    const s = settingsFromConfig({ notifications: { webhook: { url: 'https://x.example/h', isolateSecret: true }, sse: true } });
    const stored = toStoredSettings(s);
    expect(stored.webhookUrl).toBe('https://x.example/h');
    expect(parseSettings(stored.notifyConfig)).toEqual({ webhookUrl: 'https://x.example/h', isolated: true, sse: true });
  });

  it('without a webhook store no URL, and no text reads as nothing configured', () => {
    const stored = toStoredSettings(settingsFromConfig({ notifications: { sse: true } }));
    expect(stored.webhookUrl).toBeNull();
    expect(parseSettings(stored.notifyConfig)).toEqual({ webhookUrl: null, isolated: false, sse: true });
    expect(parseSettings(null)).toEqual({ webhookUrl: null, isolated: false, sse: false });
  });
});
