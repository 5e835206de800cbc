import { useDatabase } from './host-suite.js';

useDatabase('postgres');
