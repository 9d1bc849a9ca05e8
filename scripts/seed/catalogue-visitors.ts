import { copyText, NEEDS_ESCAPE } from "./copy-text";
import { type WeightTable, weightTable } from "./random";

/**
 * Who visits the demo site: where they are, the devices and browsers they use, and the names of
 * the visitors that sign in (their profiles). Part of the seed's catalogue, with
 * catalogue-sources.ts (where they come from) and catalogue-site.ts (what they see and do).
 */

// Places -------------------------------------------------------------------------------------

export interface Place {
  country: string;
  region: string;
  city: string;
  latitude: number;
  longitude: number;
}

const place = (
  country: string,
  region: string,
  city: string,
  latitude: number,
  longitude: number,
): Place => ({
  country,
  region,
  city,
  latitude,
  longitude,
});

export const PLACES = weightTable<Place>([
  [place("US", "California", "San Francisco", 37.7749, -122.4194), 6],
  [place("US", "California", "Los Angeles", 34.0522, -118.2437), 4],
  [place("US", "New York", "New York", 40.7128, -74.006), 7],
  [place("US", "Texas", "Austin", 30.2672, -97.7431), 3],
  [place("US", "Washington", "Seattle", 47.6062, -122.3321), 3],
  [place("US", "Illinois", "Chicago", 41.8781, -87.6298), 3],
  [place("US", "Massachusetts", "Boston", 42.3601, -71.0589), 2],
  [place("CA", "Ontario", "Toronto", 43.6532, -79.3832), 3],
  [place("CA", "British Columbia", "Vancouver", 49.2827, -123.1207), 2],
  [place("GB", "England", "London", 51.5074, -0.1278), 7],
  [place("GB", "England", "Manchester", 53.4808, -2.2426), 2],
  [place("GB", "Scotland", "Edinburgh", 55.9533, -3.1883), 1],
  [place("DE", "Berlin", "Berlin", 52.52, 13.405), 5],
  [place("DE", "Bavaria", "Munich", 48.1351, 11.582), 3],
  [place("DE", "Hamburg", "Hamburg", 53.5511, 9.9937), 2],
  [place("FR", "Île-de-France", "Paris", 48.8566, 2.3522), 4],
  [place("NL", "North Holland", "Amsterdam", 52.3676, 4.9041), 3],
  [place("NO", "Oslo", "Oslo", 59.9139, 10.7522), 4],
  [place("NO", "Vestland", "Bergen", 60.3913, 5.3221), 2],
  [place("NO", "Trøndelag", "Trondheim", 63.4305, 10.3951), 1],
  [place("SE", "Stockholm", "Stockholm", 59.3293, 18.0686), 3],
  [place("SE", "Västra Götaland", "Gothenburg", 57.7089, 11.9746), 1],
  [place("DK", "Capital Region", "Copenhagen", 55.6761, 12.5683), 2],
  [place("FI", "Uusimaa", "Helsinki", 60.1699, 24.9384), 1],
  [place("ES", "Madrid", "Madrid", 40.4168, -3.7038), 2],
  [place("IT", "Lombardy", "Milan", 45.4642, 9.19), 2],
  [place("PL", "Masovia", "Warsaw", 52.2297, 21.0122), 2],
  [place("IN", "Maharashtra", "Mumbai", 19.076, 72.8777), 4],
  [place("IN", "Karnataka", "Bengaluru", 12.9716, 77.5946), 4],
  [place("IN", "Delhi", "New Delhi", 28.6139, 77.209), 3],
  [place("BR", "São Paulo", "São Paulo", -23.5505, -46.6333), 3],
  [place("BR", "Rio de Janeiro", "Rio de Janeiro", -22.9068, -43.1729), 1],
  [place("MX", "Mexico City", "Mexico City", 19.4326, -99.1332), 1],
  [place("JP", "Tokyo", "Tokyo", 35.6762, 139.6503), 3],
  [place("JP", "Osaka", "Osaka", 34.6937, 135.5023), 1],
  [place("KR", "Seoul", "Seoul", 37.5665, 126.978), 1],
  [place("SG", "Singapore", "Singapore", 1.3521, 103.8198), 1],
  [place("AU", "New South Wales", "Sydney", -33.8688, 151.2093), 2],
  [place("AU", "Victoria", "Melbourne", -37.8136, 144.9631), 1],
]);

/** country\tregion\tcity\tlatitude\tlongitude, escaped. */
export const PLACE_BLOCKS = new Map<Place, string>(
  PLACES.items.map((p) => [
    p,
    [p.country, p.region, p.city, p.latitude, p.longitude].map((v) => copyText(v)).join("\t"),
  ]),
);

// Devices and browsers -----------------------------------------------------------------------

interface Browser {
  name: string;
  versions: readonly string[];
}

const CHROME: Browser = {
  name: "Chrome",
  versions: ["126.0.0.0", "127.0.0.0", "128.0.0.0", "129.0.0.0", "130.0.0.0"],
};
const FIREFOX: Browser = { name: "Firefox", versions: ["128.0", "130.0", "131.0", "132.0"] };
const EDGE: Browser = { name: "Edge", versions: ["127.0.2651.74", "128.0.2739.42", "129.0.2792.52"] };
const SAFARI: Browser = { name: "Safari", versions: ["17.5", "17.6", "18.0", "18.1"] };
const MOBILE_SAFARI: Browser = { name: "Mobile Safari", versions: ["17.5", "17.6", "18.0", "18.1"] };
const CHROME_MOBILE: Browser = { name: "Chrome Mobile", versions: ["127.0.6533.103", "128.0.6613.127"] };
const CHROME_IOS: Browser = { name: "Chrome iOS", versions: ["127.0.6533.107", "128.0.6613.98"] };
const SAMSUNG_INTERNET: Browser = { name: "Samsung Internet", versions: ["25.0", "26.0"] };
const MIUI_BROWSER: Browser = { name: "MIUI Browser", versions: ["14.10.0", "18.2.0"] };

type DeviceKind = "desktop" | "mobile" | "tablet";

interface DeviceProfile {
  device: DeviceKind;
  brand: string | null;
  models: ReadonlyArray<string | null>;
  os: string;
  osVersions: ReadonlyArray<string | null>;
  browsers: WeightTable<Browser>;
}

const profile = (
  device: DeviceKind,
  brand: string | null,
  models: ReadonlyArray<string | null>,
  os: string,
  osVersions: ReadonlyArray<string | null>,
  browsers: ReadonlyArray<readonly [Browser, number]>,
): DeviceProfile => ({ device, brand, models, os, osVersions, browsers: weightTable(browsers) });

export const DEVICE_PROFILES = weightTable<DeviceProfile>([
  [
    profile(
      "desktop",
      null,
      [null],
      "Windows",
      ["10", "11", "11"],
      [
        [CHROME, 60],
        [EDGE, 25],
        [FIREFOX, 15],
      ],
    ),
    30,
  ],
  [
    profile(
      "desktop",
      "Apple",
      ["Macintosh"],
      "macOS",
      ["14.5", "14.6", "15.0", "15.1"],
      [
        [CHROME, 45],
        [SAFARI, 38],
        [FIREFOX, 12],
        [EDGE, 5],
      ],
    ),
    19,
  ],
  [
    profile(
      "desktop",
      null,
      [null],
      "Linux",
      [null],
      [
        [CHROME, 45],
        [FIREFOX, 55],
      ],
    ),
    4,
  ],
  [profile("desktop", null, [null], "Chrome OS", ["126.0.0", "128.0.0"], [[CHROME, 1]]), 2],
  [
    profile(
      "mobile",
      "Apple",
      ["iPhone 15", "iPhone 15 Pro", "iPhone 14", "iPhone 13", "iPhone SE"],
      "iOS",
      ["17.5", "17.6", "18.0", "18.1"],
      [
        [MOBILE_SAFARI, 85],
        [CHROME_IOS, 15],
      ],
    ),
    19,
  ],
  [
    profile(
      "mobile",
      "Samsung",
      ["Galaxy S24", "Galaxy S23", "Galaxy A54", "Galaxy A34"],
      "Android",
      ["13", "14"],
      [
        [CHROME_MOBILE, 65],
        [SAMSUNG_INTERNET, 35],
      ],
    ),
    9,
  ],
  [
    profile(
      "mobile",
      "Google",
      ["Pixel 8", "Pixel 8 Pro", "Pixel 7a"],
      "Android",
      ["14", "15"],
      [[CHROME_MOBILE, 1]],
    ),
    4,
  ],
  [
    profile(
      "mobile",
      "Xiaomi",
      ["Redmi Note 12", "Redmi Note 13", "14"],
      "Android",
      ["13", "14"],
      [
        [CHROME_MOBILE, 80],
        [MIUI_BROWSER, 20],
      ],
    ),
    3,
  ],
  [profile("mobile", "OnePlus", ["OnePlus 12", "Nord 3"], "Android", ["14"], [[CHROME_MOBILE, 1]]), 2],
  [
    profile(
      "tablet",
      "Apple",
      ["iPad Air", "iPad Pro 11", "iPad"],
      "iOS",
      ["17.5", "17.6", "18.1"],
      [
        [MOBILE_SAFARI, 90],
        [CHROME_IOS, 10],
      ],
    ),
    5,
  ],
  [
    profile(
      "tablet",
      "Samsung",
      ["Galaxy Tab S9", "Galaxy Tab A8"],
      "Android",
      ["13", "14"],
      [
        [CHROME_MOBILE, 60],
        [SAMSUNG_INTERNET, 40],
      ],
    ),
    2,
  ],
]);

for (const kind of DEVICE_PROFILES.items) {
  const strings = [kind.device, kind.brand, kind.os, ...kind.models, ...kind.osVersions];
  for (const browser of kind.browsers.items) strings.push(browser.name, ...browser.versions);
  if (strings.some((v) => v !== null && NEEDS_ESCAPE.test(v)))
    throw new Error("device catalog needs escaping");
}

// Profiles -----------------------------------------------------------------------------------

export const FIRST_NAMES = [
  "Emma",
  "Liam",
  "Olivia",
  "Noah",
  "Ava",
  "Lucas",
  "Sofia",
  "Mateo",
  "Ingrid",
  "Bjørn",
  "Astrid",
  "Søren",
  "Maja",
  "Oskar",
  "Hanna",
  "Jonas",
  "Amélie",
  "Louis",
  "Chloé",
  "Léa",
  "José",
  "María",
  "João",
  "Ana",
  "Priya",
  "Arjun",
  "Aarav",
  "Ananya",
  "Yuki",
  "Haruto",
  "Sakura",
  "Min-jun",
  "Zoë",
  "Ethan",
  "Mia",
  "Jack",
] as const;
export const LAST_NAMES = [
  "Smith",
  "Johnson",
  "Williams",
  "Brown",
  "Garcia",
  "Miller",
  "Hansen",
  "Johansen",
  "Olsen",
  "Larsen",
  "Andersson",
  "Lindqvist",
  "Nilsson",
  "Müller",
  "Schmidt",
  "Schneider",
  "Dubois",
  "Lefèvre",
  "Rossi",
  "Silva",
  "Santos",
  "Patel",
  "Sharma",
  "Gupta",
  "Tanaka",
  "Suzuki",
  "Kim",
  "O'Brien",
  "Nguyen",
  "Kowalski",
] as const;
export const EMAIL_DOMAINS = ["example.com", "example.org", "example.net", "mail.example"] as const;
export const COMPANIES = [
  "Acme Inc",
  "Globex",
  "Initech",
  "Umbrella",
  "Hooli",
  "Stark Industries",
  "Nordlys AS",
  null,
];
export const ROLES = [
  "Engineer",
  "Product Manager",
  "Designer",
  "Founder",
  "Marketer",
  "Data Analyst",
] as const;
export const PROFILE_PLANS = ["free", "free", "pro", "pro", "team"] as const;
