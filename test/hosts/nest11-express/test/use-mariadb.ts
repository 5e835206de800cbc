import { useDatabase } from './host-suite';

useDatabase('mariadb');
