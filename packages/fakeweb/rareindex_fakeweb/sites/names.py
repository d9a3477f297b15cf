"""Reference data the catalog draws from: real sets, players, Pokémon, comics and coin types.

Numbers and values are plausible, not authoritative: they make titles look like the real hobby
(``2018 Panini Prizm Luka Dončić #280 Silver Prizm RC``) and prices land in believable ranges.
Values are a raw near-mint reference in USD cents; grades and parallels multiply them.
"""

from __future__ import annotations

from typing import NamedTuple


class Parallel(NamedTuple):
    name: str
    print_run: int | None
    factor: float


class KeyCard(NamedTuple):
    year: int
    set_name: str
    brand: str
    sport: str
    number: str
    player: str
    rookie: bool
    value: int
    card_type: str = ""
    first_bowman: bool = False


# fmt: off
CHROME = (
    Parallel("Refractor", None, 2.0),
    Parallel("X-Fractor", None, 2.5),
    Parallel("Prism Refractor", None, 2.2),
    Parallel("Green Refractor", 99, 5.0),
    Parallel("Gold Refractor", 50, 10.0),
    Parallel("Orange Refractor", 25, 16.0),
    Parallel("Red Refractor", 5, 40.0),
    Parallel("Superfractor", 1, 150.0),
)
PRIZM = (
    Parallel("Silver Prizm", None, 3.0),
    Parallel("Red White & Blue Prizm", None, 1.8),
    Parallel("Green Prizm", None, 2.2),
    Parallel("Blue Prizm", 199, 5.0),
    Parallel("Orange Prizm", 49, 12.0),
    Parallel("Gold Prizm", 10, 40.0),
    Parallel("Black Prizm", 1, 120.0),
)
BOWMAN = (
    Parallel("Refractor", 499, 2.5),
    Parallel("Blue Refractor", 150, 4.0),
    Parallel("Green Refractor", 99, 6.0),
    Parallel("Gold Refractor", 50, 12.0),
    Parallel("Orange Refractor", 25, 20.0),
    Parallel("Red Refractor", 5, 60.0),
)
OPTIC = (
    Parallel("Holo", None, 2.5),
    Parallel("Purple Shock", None, 2.0),
    Parallel("Pink Velocity", None, 2.2),
    Parallel("Gold", 10, 40.0),
)
SELECT = (
    Parallel("Silver Prizm", None, 2.5),
    Parallel("Zebra", None, 6.0),
)
UPDATE = (
    Parallel("Rainbow Foil", None, 1.6),
    Parallel("Vintage Stock", 99, 6.0),
)
YOUNG_GUNS = (
    Parallel("Exclusives", 100, 6.0),
    Parallel("High Gloss", 10, 30.0),
)

PARALLELS: dict[str, tuple[Parallel, ...]] = {
    "Topps Chrome": CHROME,
    "Topps Chrome Update": CHROME,
    "Panini Prizm": PRIZM,
    "Bowman Chrome": BOWMAN,
    "Bowman Chrome Draft": BOWMAN,
    "Donruss Optic": OPTIC,
    "Panini Select": SELECT,
    "Topps Update": UPDATE,
    "Upper Deck Series 1": YOUNG_GUNS,
}

KEY_CARDS = (
    KeyCard(1933, "Goudey", "Goudey", "Baseball", "53", "Babe Ruth", False, 2500000),
    KeyCard(1952, "Topps", "Topps", "Baseball", "311", "Mickey Mantle", False, 6000000),
    KeyCard(1955, "Topps", "Topps", "Baseball", "164", "Roberto Clemente", True, 800000),
    KeyCard(1957, "Topps", "Topps", "Football", "138", "Johnny Unitas", True, 120000),
    KeyCard(1979, "O-Pee-Chee", "O-Pee-Chee", "Hockey", "18", "Wayne Gretzky", True, 250000),
    KeyCard(1986, "Fleer", "Fleer", "Basketball", "57", "Michael Jordan", True, 350000),
    KeyCard(1989, "Upper Deck", "Upper Deck", "Baseball", "1", "Ken Griffey Jr.", True, 9000),
    KeyCard(1993, "SP", "Upper Deck", "Baseball", "279", "Derek Jeter", True, 40000, "Foil"),
    KeyCard(2000, "Playoff Contenders", "Playoff", "Football", "144", "Tom Brady", True, 2500000,
            "Rookie Ticket Auto"),
    KeyCard(2003, "Topps Chrome", "Topps", "Basketball", "111", "LeBron James", True, 150000),
    KeyCard(2009, "Bowman Chrome Draft", "Bowman", "Baseball", "BDPP89", "Mike Trout", False, 60000,
            "Prospects", True),
    KeyCard(2009, "Topps Chrome", "Topps", "Basketball", "101", "Stephen Curry", True, 90000),
    KeyCard(2011, "Topps Update", "Topps", "Baseball", "US175", "Mike Trout", True, 25000),
    KeyCard(2015, "Upper Deck Series 1", "Upper Deck", "Hockey", "201", "Connor McDavid", True,
            60000, "Young Guns"),
    KeyCard(2017, "Panini Prizm", "Panini", "Football", "269", "Patrick Mahomes", True, 40000),
    KeyCard(2018, "Topps Chrome", "Topps", "Baseball", "150", "Shohei Ohtani", True, 12000),
    KeyCard(2018, "Topps Update", "Topps", "Baseball", "US1", "Shohei Ohtani", True, 6000),
    KeyCard(2018, "Topps Update", "Topps", "Baseball", "US250", "Ronald Acuña Jr.", True, 4500),
    KeyCard(2018, "Topps Update", "Topps", "Baseball", "US300", "Juan Soto", True, 4000),
    KeyCard(2018, "Panini Prizm", "Panini", "Basketball", "280", "Luka Dončić", True, 25000),
    KeyCard(2018, "Panini Prizm", "Panini", "Basketball", "78", "Trae Young", True, 3000),
    KeyCard(2018, "Panini Prizm", "Panini", "Football", "205", "Josh Allen", True, 15000),
    KeyCard(2019, "Panini Prizm", "Panini", "Basketball", "248", "Zion Williamson", True, 4000),
    KeyCard(2019, "Panini Prizm", "Panini", "Basketball", "249", "Ja Morant", True, 3500),
    KeyCard(2020, "Panini Prizm", "Panini", "Basketball", "258", "Anthony Edwards", True, 6000),
    KeyCard(2020, "Panini Prizm", "Panini", "Basketball", "278", "LaMelo Ball", True, 5500),
    KeyCard(2020, "Panini Prizm", "Panini", "Football", "307", "Joe Burrow", True, 9000),
    KeyCard(2020, "Panini Prizm", "Panini", "Football", "325", "Justin Herbert", True, 7000),
    KeyCard(2021, "Donruss Optic", "Panini", "Football", "201", "Trevor Lawrence", True, 4000),
    KeyCard(2022, "Bowman Chrome Draft", "Bowman", "Baseball", "BDC-1", "Druw Jones", False, 2000,
            "Prospects", True),
    KeyCard(2023, "Bowman Chrome Draft", "Bowman", "Baseball", "BDC-EX", "Paul Skenes", False, 9000,
            "Prospects", True),
    KeyCard(2023, "Topps Chrome Update", "Topps", "Baseball", "USC150", "Elly De La Cruz", True,
            4000),
    KeyCard(2023, "Panini Prizm", "Panini", "Basketball", "136", "Victor Wembanyama", True, 12000),
    KeyCard(2024, "Topps Chrome", "Topps", "Baseball", "225", "Jackson Holliday", True, 3000),
)

PLAYERS = {
    "Baseball": (
        "Aaron Judge", "Mookie Betts", "Fernando Tatis Jr.", "Bobby Witt Jr.", "Julio Rodríguez",
        "Gunnar Henderson", "Corbin Carroll", "Adley Rutschman", "Vladimir Guerrero Jr.",
        "Bryce Harper", "Freddie Freeman", "Yordan Alvarez", "Spencer Strider", "Jackson Chourio",
    ),
    "Basketball": (
        "Giannis Antetokounmpo", "Nikola Jokić", "Jayson Tatum", "Devin Booker",
        "Shai Gilgeous-Alexander", "Tyrese Haliburton", "Paolo Banchero", "Chet Holmgren",
        "Cade Cunningham", "Kevin Durant", "Joel Embiid", "Scoot Henderson",
    ),
    "Football": (
        "Justin Jefferson", "Ja'Marr Chase", "Jalen Hurts", "Lamar Jackson", "C.J. Stroud",
        "Bijan Robinson", "Brock Purdy", "Puka Nacua", "Caleb Williams", "Jayden Daniels",
        "Travis Kelce",
    ),
    "Hockey": (
        "Auston Matthews", "Cale Makar", "Connor Bedard", "Sidney Crosby", "Nathan MacKinnon",
        "Jack Hughes",
    ),
}

# (set, brand, sport, set size, first year, last year, number prefix)
FILLER_SETS = (
    ("Topps Chrome", "Topps", "Baseball", 220, 2019, 2025, ""),
    ("Bowman Chrome", "Bowman", "Baseball", 100, 2019, 2025, ""),
    ("Panini Prizm", "Panini", "Basketball", 300, 2019, 2024, ""),
    ("Donruss Optic", "Panini", "Basketball", 200, 2019, 2024, ""),
    ("Panini Select", "Panini", "Basketball", 200, 2019, 2024, ""),
    ("Panini Prizm", "Panini", "Football", 400, 2019, 2024, ""),
    ("Donruss Optic", "Panini", "Football", 200, 2020, 2024, ""),
    ("Upper Deck Series 1", "Upper Deck", "Hockey", 250, 2019, 2024, ""),
)

# Pokémon: (set, year, size, editions, raw holo value, [(number, name, value factor)])
VINTAGE_EDITIONS = ("1st Edition", "Unlimited")
POKEMON_VINTAGE = (
    ("Base Set", 1999, 102, ("1st Edition", "Shadowless", "Unlimited"), 4000, (
        (1, "Alakazam", 1.2), (2, "Blastoise", 3.0), (3, "Chansey", 1.0), (4, "Charizard", 10.0),
        (5, "Clefairy", 0.8), (6, "Gyarados", 1.2), (7, "Hitmonchan", 0.9), (8, "Machamp", 0.4),
        (9, "Magneton", 0.8), (10, "Mewtwo", 1.6), (11, "Nidoking", 1.0), (12, "Ninetales", 1.1),
        (13, "Poliwrath", 0.8), (14, "Raichu", 1.3), (15, "Venusaur", 2.5), (16, "Zapdos", 1.3),
    )),
    ("Jungle", 1999, 64, VINTAGE_EDITIONS, 2000, (
        (1, "Clefable", 0.8), (3, "Flareon", 1.4), (4, "Jolteon", 1.4), (5, "Kangaskhan", 0.9),
        (8, "Pidgeot", 1.0), (9, "Pinsir", 0.8), (10, "Scyther", 1.2), (11, "Snorlax", 1.5),
        (12, "Vaporeon", 1.6), (16, "Wigglytuff", 0.8),
    )),
    ("Fossil", 1999, 62, VINTAGE_EDITIONS, 2000, (
        (1, "Aerodactyl", 1.0), (2, "Articuno", 1.3), (3, "Ditto", 1.0), (4, "Dragonite", 1.6),
        (5, "Gengar", 2.0), (10, "Lapras", 1.2), (12, "Moltres", 1.3), (15, "Zapdos", 1.3),
    )),
    ("Team Rocket", 2000, 82, VINTAGE_EDITIONS, 2500, (
        (3, "Dark Blastoise", 1.6), (4, "Dark Charizard", 4.0), (5, "Dark Dragonite", 1.4),
        (8, "Dark Gyarados", 1.2), (10, "Dark Machamp", 0.9),
    )),
    ("Neo Genesis", 2000, 111, VINTAGE_EDITIONS, 3000, (
        (4, "Feraligatr", 1.2), (9, "Lugia", 8.0), (10, "Meganium", 1.0), (12, "Pichu", 0.9),
        (17, "Typhlosion", 1.8),
    )),
)
# Modern chase cards: (set, year, collector number, name, finish, raw value)
POKEMON_MODERN = (
    ("Hidden Fates", 2019, "SV49/SV94", "Charizard GX", "Shiny Vault Holo", 25000),
    ("Evolving Skies", 2021, "215/203", "Umbreon VMAX", "Alternate Art Secret", 120000),
    ("Evolving Skies", 2021, "218/203", "Rayquaza VMAX", "Alternate Art Secret", 60000),
    ("Evolving Skies", 2021, "212/203", "Sylveon VMAX", "Alternate Art Secret", 25000),
    ("Evolving Skies", 2021, "192/203", "Dragonite V", "Alternate Art", 20000),
    ("Scarlet & Violet 151", 2023, "199/165", "Charizard ex", "Special Illustration Rare", 12000),
    ("Scarlet & Violet 151", 2023, "205/165", "Mew ex", "Hyper Rare", 4000),
    ("Scarlet & Violet 151", 2023, "173/165", "Pikachu", "Illustration Rare", 1200),
    ("Scarlet & Violet 151", 2023, "203/165", "Erika's Invitation", "Special Illustration Rare",
     6000),
    ("Crown Zenith", 2023, "GG69/GG70", "Giratina VSTAR", "Galarian Gallery", 15000),
    ("Crown Zenith", 2023, "GG44/GG70", "Mewtwo VSTAR", "Galarian Gallery", 3000),
    ("Paldean Fates", 2024, "234/091", "Charizard ex", "Special Illustration Rare", 9000),
    ("Prismatic Evolutions", 2025, "161/131", "Umbreon ex", "Special Illustration Rare", 90000),
)
POKEMON_NAMES = (
    "Pikachu", "Eevee", "Gengar", "Gardevoir ex", "Lucario", "Mimikyu", "Snorlax", "Gyarados ex",
    "Dragonite", "Greninja ex", "Lugia V", "Arceus VSTAR", "Miraidon ex", "Koraidon ex",
)

# Comics: (publisher, series, volume start, issue, year, note, raw value, cover variants)
COMIC_KEYS = (
    ("Marvel", "The Amazing Spider-Man", 1963, "129", 1974, "1st Punisher", 80000, ("",)),
    ("Marvel", "The Amazing Spider-Man", 1963, "300", 1988, "1st full Venom", 50000,
     ("Direct Edition", "Newsstand")),
    ("Marvel", "The Amazing Spider-Man", 1963, "361", 1992, "1st Carnage", 6000,
     ("Direct Edition", "Newsstand", "2nd Printing")),
    ("Marvel", "The Incredible Hulk", 1962, "181", 1974, "1st full Wolverine", 300000, ("",)),
    ("Marvel", "Giant-Size X-Men", 1975, "1", 1975, "1st new X-Men", 250000, ("",)),
    ("Marvel", "The New Mutants", 1983, "98", 1991, "1st Deadpool", 25000,
     ("Direct Edition", "Newsstand")),
    ("Marvel", "X-Men", 1991, "1", 1991, "Jim Lee", 1500,
     ("Cover A", "Cover B", "Cover C", "Cover D", "Cover E Gatefold")),
    ("Marvel", "Ultimate Fallout", 2011, "4", 2011, "1st Miles Morales", 40000,
     ("Cover A", "2nd Printing", "1:50 Variant")),
    ("Marvel", "Edge of Spider-Verse", 2014, "2", 2014, "1st Spider-Gwen", 30000,
     ("Cover A", "1:25 Variant", "2nd Printing")),
    ("Marvel", "Star Wars", 1977, "1", 1977, "35 Cent Price Variant", 60000,
     ("", "35 Cent Price Variant")),
    ("Marvel", "Marvel Spotlight", 1971, "5", 1972, "1st Ghost Rider", 90000, ("",)),
    ("DC", "Batman Adventures", 1992, "12", 1993, "1st Harley Quinn", 100000, ("",)),
    ("DC", "Batman", 1940, "423", 1988, "McFarlane cover", 15000, ("Direct Edition", "Newsstand")),
    ("DC", "The New Teen Titans", 1980, "2", 1980, "1st Deathstroke", 30000, ("",)),
    ("DC", "Swamp Thing", 1982, "37", 1985, "1st John Constantine", 40000, ("",)),
    ("DC", "Action Comics", 1938, "1000", 2018, "Anniversary issue", 1000,
     ("Cover A", "1:25 Variant", "Virgin Variant")),
    ("Image", "The Walking Dead", 2003, "1", 2003, "1st Rick Grimes", 150000, ("",)),
    ("Image", "Spawn", 1992, "1", 1992, "1st Spawn", 4000, ("Direct Edition", "Newsstand")),
    ("Image", "Saga", 2012, "1", 2012, "1st Alana and Marko", 15000,
     ("Cover A", "2nd Printing", "1:25 Variant")),
    ("Image", "Invincible", 2003, "1", 2003, "1st Invincible", 25000, ("",)),
    ("BOOM! Studios", "Something Is Killing the Children", 2019, "1", 2019, "1st Erica Slaughter",
     8000,
     ("Cover A", "1:25 Variant", "Virgin Variant")),
    ("Dark Horse", "Hellboy: Seed of Destruction", 1994, "1", 1994, "1st Hellboy solo", 20000,
     ("",)),
)
# Runs of ordinary issues: (publisher, series, volume start, first issue, last, first year)
COMIC_RUNS = (
    ("Marvel", "The Amazing Spider-Man", 1963, 200, 440, 1980),
    ("Marvel", "The Uncanny X-Men", 1963, 200, 350, 1985),
    ("Marvel", "Daredevil", 1964, 160, 300, 1979),
    ("DC", "Batman", 1940, 400, 520, 1986),
    ("DC", "Detective Comics", 1937, 560, 700, 1986),
    ("Image", "Spawn", 1992, 2, 300, 1992),
    ("Marvel", "Venom", 2018, 1, 35, 2018),
    ("DC", "Batman", 2016, 1, 150, 2016),
    ("Marvel", "The Amazing Spider-Man", 2018, 1, 90, 2018),
)
UPC_PREFIX = {
    "Marvel": "759606",
    "DC": "761941",
    "Image": "709853",
    "BOOM! Studios": "842770",
    "Dark Horse": "761568",
}

# Coins: type -> (denomination, first year, last year, mints, raw value, PCGS# base, designations)
COIN_TYPES = {
    "Morgan Dollar": ("$1", 1878, 1921, ("", "O", "S", "CC"), 6000, 7070, ("", "PL", "DMPL")),
    "Peace Dollar": ("$1", 1921, 1935, ("", "D", "S"), 4500, 7356, ("",)),
    "Walking Liberty Half Dollar": ("50C", 1916, 1947, ("", "D", "S"), 3500, 6570, ("",)),
    "Mercury Dime": ("10C", 1916, 1945, ("", "D", "S"), 800, 4905, ("", "FB")),
    "Lincoln Wheat Cent": ("1C", 1909, 1958, ("", "D", "S"), 300, 2425, ("RD", "RB", "BN")),
    "Buffalo Nickel": ("5C", 1913, 1938, ("", "D", "S"), 1000, 3915, ("",)),
    "Standing Liberty Quarter": ("25C", 1917, 1930, ("", "D", "S"), 4000, 5705, ("", "FH")),
    "Saint-Gaudens Double Eagle": ("$20", 1907, 1933, ("", "D", "S"), 250000, 9130, ("",)),
    "American Silver Eagle": ("$1", 1986, 2025, ("", "S", "W"), 3500, 9801, ("", "DCAM")),
}
# (type, year, mint, variety, raw value)
KEY_COINS = (
    ("Morgan Dollar", 1893, "S", "", 900000),
    ("Morgan Dollar", 1889, "CC", "", 250000),
    ("Morgan Dollar", 1884, "CC", "", 25000),
    ("Morgan Dollar", 1881, "S", "", 7000),
    ("Mercury Dime", 1916, "D", "", 150000),
    ("Lincoln Wheat Cent", 1909, "S", "VDB", 120000),
    ("Lincoln Wheat Cent", 1955, "", "Doubled Die Obverse", 180000),
    ("Buffalo Nickel", 1937, "D", "3-Legged", 90000),
    ("Peace Dollar", 1921, "", "High Relief", 25000),
    ("Peace Dollar", 1928, "", "", 35000),
    ("Walking Liberty Half Dollar", 1921, "S", "", 90000),
    ("Saint-Gaudens Double Eagle", 1907, "", "High Relief, Wire Rim", 1500000),
)
# fmt: on
