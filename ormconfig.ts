// The TypeORM CLI's data source (`npx typeorm -d dist/ormconfig.js migration:show`): the same
// options the service uses, read from DATABASE_URL. Use `mariadb://` for a MariaDB server here;
// the service itself detects the flavour.
import { DataSource } from 'typeorm';
import { loadConfig } from './src/host/config/app-config';
import { hostDataSourceOptions } from './src/host/config/host-data-source';

const config = loadConfig();
const flavor = process.env.DATABASE_URL?.startsWith('mariadb:') ? 'mariadb' : undefined;

export default new DataSource(hostDataSourceOptions(config.database, { serverFlavor: flavor }));
