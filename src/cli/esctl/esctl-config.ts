import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** What `esctl login` keeps: the service's base URL and the tenant's API key. */
export interface EsctlConfig {
  url: string;
  apiKey: string;
}

/** `ESCTL_CONFIG`, else `$XDG_CONFIG_HOME/esctl/config.json`, else `~/.config/esctl/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ESCTL_CONFIG) return env.ESCTL_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'esctl', 'config.json');
}

/** Written 0600 (the key is a secret), the directory 0700; an existing file is narrowed to 0600 too. */
export function saveConfig(config: EsctlConfig, file = configPath()): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
  // writeFileSync's mode applies only when it creates the file.
  fs.chmodSync(file, 0o600);
}

/** The saved login, overridden field by field by `ESCTL_URL` / `ESCTL_API_KEY`; null when neither gives both. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, file = configPath(env)): EsctlConfig | null {
  let saved: Partial<EsctlConfig> = {};
  if (fs.existsSync(file)) saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<EsctlConfig>;
  const url = env.ESCTL_URL || saved.url;
  const apiKey = env.ESCTL_API_KEY || saved.apiKey;
  return url && apiKey ? { url: url.replace(/\/+$/, ''), apiKey } : null;
}
