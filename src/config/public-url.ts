/** The URL clients use: configured, or http://host:port (with a bracketed IPv6 host). */
export function publicUrlFor(config: { readonly publicUrl?: string | undefined; readonly host: string }, boundPort: number): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
}
