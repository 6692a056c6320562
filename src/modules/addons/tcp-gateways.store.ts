import { type Db } from '../../db/database.ts';

export interface TcpGatewayRow {
  addon_id: string;
  app_id: string;
  /** The port of 127.0.0.1 the gateway listens on (TCP_URL). */
  port: number;
}

/** TCP gateway addons. Maps addon id → its app and the port it listens on. */
export function createTcpGatewaysStore(db: Db) {
  const s = {
    all: db.prepare<[], TcpGatewayRow>('SELECT * FROM tcp_gateways ORDER BY addon_id'),
    byAddon: db.prepare<[string], TcpGatewayRow>('SELECT * FROM tcp_gateways WHERE addon_id = ?'),
    upsert: db.prepare(
      'INSERT INTO tcp_gateways (addon_id, app_id, port) VALUES (@addon_id, @app_id, @port) ' +
        'ON CONFLICT(addon_id) DO UPDATE SET port = excluded.port',
    ),
    delete: db.prepare('DELETE FROM tcp_gateways WHERE addon_id = ?'),
  };
  return {
    all: () => s.all.all(),
    byAddon: (addonId: string) => s.byAddon.get(addonId),
    upsert: (row: TcpGatewayRow) => void s.upsert.run(row),
    delete: (addonId: string) => void s.delete.run(addonId),
  };
}

export type TcpGatewaysStore = ReturnType<typeof createTcpGatewaysStore>;
