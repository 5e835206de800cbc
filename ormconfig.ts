// The TypeORM CLI's data source (`npx typeorm -d dist/ormconfig.js migration:show`): the same
// options the service uses, read from DATABASE_URL (a MySQL-protocol server is asked which it is).
import { DataSource } from 'typeorm';
import { loadConfig } from './src/host/config/app-config';
import { hostDataSourceOptions } from './src/host/config/host-data-source';

const config = loadConfig();

export default hostDataSourceOptions(config.database).then((options) => new DataSource(options));
