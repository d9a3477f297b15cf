"""Vocabularies for :mod:`.scale_catalog`: sibling products, checklists, Jr./Sr. pairs, noise.

The sibling tables are the traps a title matcher falls into
(docs/domain.md#title-noise-and-red-flags): products that share players and card numbers (Panini
Prizm ↔ Mosaic ↔ Select ↔ Donruss Optic; Topps Chrome ↔ Sapphire ↔ Finest), Pokémon reprint sets
that share names (Base Set ↔ Base Set 2 ↔ Legendary Collection), comic series and volumes that share
issue numbers, and fathers and sons. Players built from :data:`FIRST_NAMES` and :data:`LAST_NAMES`
are made up.
"""

from __future__ import annotations

from typing import NamedTuple

from rareindex_fakeweb.sites.names import (
    BOWMAN,
    CHROME,
    OPTIC,
    PRIZM,
    SELECT,
    UPDATE,
    YOUNG_GUNS,
    Parallel,
)


class SetSpec(NamedTuple):
    """A sports product: cards ``prefix``1…``size`` each year from ``first`` to ``last``."""

    name: str
    brand: str
    sport: str
    first: int
    last: int
    size: int
    family: str
    prefix: str = ""


class JrSr(NamedTuple):
    senior: str
    junior: str
    sport: str
    senior_years: tuple[int, int]
    junior_years: tuple[int, int]


# fmt: off
PARALLEL_FAMILIES: dict[str, tuple[Parallel, ...]] = {
    "chrome": CHROME,
    "prizm": PRIZM,
    "bowman_chrome": BOWMAN,
    "optic": OPTIC,
    "select": (*SELECT, Parallel("Tie-Dye Prizm", 25, 15.0), Parallel("Gold Prizm", 10, 30.0)),
    "update": UPDATE,
    "young_guns": YOUNG_GUNS,
    "mosaic": (Parallel("Silver Mosaic", None, 2.5), Parallel("Genesis", None, 5.0),
               Parallel("Green Mosaic", None, 2.0), Parallel("Gold Mosaic", 10, 30.0)),
    "sapphire": (Parallel("Orange Sapphire", 25, 8.0), Parallel("Red Sapphire", 5, 25.0),
                 Parallel("Padparadscha", 1, 90.0)),
    "finest": (Parallel("Refractor", None, 2.0), Parallel("Gold Refractor", 50, 10.0),
               Parallel("Superfractor", 1, 120.0)),
    "flagship": (Parallel("Gold Foil", None, 2.0), Parallel("Rainbow Foil", None, 1.5),
                 Parallel("Vintage Stock", 99, 6.0), Parallel("Black", 73, 8.0)),
    "heritage": (Parallel("Chrome", 999, 3.0), Parallel("Black Bordered", 50, 8.0)),
    "donruss": (Parallel("Press Proof", None, 2.0), Parallel("Holo Orange Laser", None, 3.0)),
    "hoops": (Parallel("Silver", None, 1.5), Parallel("Teal Explosion", None, 2.5)),
    "contenders": (Parallel("Cracked Ice", 22, 10.0), Parallel("Championship Ticket", 1, 80.0)),
    "treasures": (Parallel("Holo Gold", 10, 5.0), Parallel("Platinum", 1, 20.0)),
    "opc": (Parallel("Rainbow", None, 2.0), Parallel("Blank Back", None, 3.0)),
    "sp": (Parallel("Limited", 100, 5.0), Parallel("Future Watch", 999, 2.0)),
    "plain": (),
}

SPORTS_SETS = (
    SetSpec("Topps", "Topps", "Baseball", 1952, 2025, 660, "flagship"),
    SetSpec("Topps Chrome", "Topps", "Baseball", 1996, 2025, 220, "chrome"),
    SetSpec("Topps Chrome Sapphire", "Topps", "Baseball", 2019, 2025, 220, "sapphire"),
    SetSpec("Topps Chrome Black", "Topps", "Baseball", 2021, 2025, 100, "chrome"),
    SetSpec("Topps Finest", "Topps", "Baseball", 1993, 2025, 100, "finest"),
    SetSpec("Topps Update", "Topps", "Baseball", 2006, 2025, 330, "update", "US"),
    SetSpec("Topps Chrome Update", "Topps", "Baseball", 2021, 2025, 220, "chrome", "USC"),
    SetSpec("Topps Heritage", "Topps", "Baseball", 2001, 2025, 500, "heritage"),
    SetSpec("Topps Stadium Club", "Topps", "Baseball", 1991, 2025, 300, "finest"),
    SetSpec("Bowman", "Bowman", "Baseball", 1989, 2025, 100, "plain"),
    SetSpec("Bowman Chrome", "Bowman", "Baseball", 1997, 2025, 100, "bowman_chrome"),
    SetSpec("Bowman Draft", "Bowman", "Baseball", 2005, 2025, 200, "plain", "BD-"),
    SetSpec("Bowman Chrome Draft", "Bowman", "Baseball", 2005, 2025, 200, "bowman_chrome", "BDC-"),
    SetSpec("Upper Deck", "Upper Deck", "Baseball", 1989, 2010, 800, "plain"),
    SetSpec("Donruss", "Panini", "Baseball", 1981, 2025, 660, "donruss"),
    SetSpec("Fleer", "Fleer", "Baseball", 1981, 2007, 660, "plain"),
    SetSpec("Score", "Score", "Baseball", 1988, 1998, 660, "plain"),
    SetSpec("Panini Prizm", "Panini", "Basketball", 2012, 2025, 300, "prizm"),
    SetSpec("Panini Mosaic", "Panini", "Basketball", 2019, 2025, 300, "mosaic"),
    SetSpec("Panini Select", "Panini", "Basketball", 2013, 2025, 300, "select"),
    SetSpec("Donruss Optic", "Panini", "Basketball", 2016, 2025, 200, "optic"),
    SetSpec("Donruss", "Panini", "Basketball", 2014, 2025, 250, "donruss"),
    SetSpec("NBA Hoops", "Panini", "Basketball", 1989, 2025, 300, "hoops"),
    SetSpec("Fleer", "Fleer", "Basketball", 1986, 2008, 170, "plain"),
    SetSpec("Upper Deck", "Upper Deck", "Basketball", 1991, 2009, 300, "plain"),
    SetSpec("Topps Chrome", "Topps", "Basketball", 1996, 2025, 200, "chrome"),
    SetSpec("National Treasures", "Panini", "Basketball", 2009, 2025, 150, "treasures"),
    SetSpec("Panini Contenders", "Panini", "Basketball", 2016, 2025, 150, "contenders"),
    SetSpec("Panini Prizm", "Panini", "Football", 2012, 2025, 400, "prizm"),
    SetSpec("Panini Mosaic", "Panini", "Football", 2020, 2025, 300, "mosaic"),
    SetSpec("Panini Select", "Panini", "Football", 2014, 2025, 300, "select"),
    SetSpec("Donruss Optic", "Panini", "Football", 2016, 2025, 200, "optic"),
    SetSpec("Donruss", "Panini", "Football", 2014, 2025, 300, "donruss"),
    SetSpec("Score", "Panini", "Football", 1989, 2025, 440, "plain"),
    SetSpec("Playoff Contenders", "Playoff", "Football", 2000, 2015, 200, "contenders"),
    SetSpec("Panini Contenders", "Panini", "Football", 2016, 2025, 200, "contenders"),
    SetSpec("Topps", "Topps", "Football", 1956, 2016, 440, "flagship"),
    SetSpec("Topps Chrome", "Topps", "Football", 1996, 2016, 220, "chrome"),
    SetSpec("Upper Deck Series 1", "Upper Deck", "Hockey", 1990, 2025, 250, "young_guns"),
    SetSpec("Upper Deck Series 2", "Upper Deck", "Hockey", 1990, 2025, 250, "young_guns"),
    SetSpec("O-Pee-Chee", "O-Pee-Chee", "Hockey", 1968, 2025, 600, "opc"),
    SetSpec("O-Pee-Chee Platinum", "Upper Deck", "Hockey", 2011, 2025, 200, "opc"),
    SetSpec("SP Authentic", "Upper Deck", "Hockey", 1995, 2025, 200, "sp"),
    SetSpec("Upper Deck Ice", "Upper Deck", "Hockey", 2000, 2025, 150, "plain"),
)

# Products that share a player's card number with a sibling product of the same year.
SIBLING_SETS: dict[str, tuple[str, ...]] = {
    "Panini Prizm": ("Panini Mosaic", "Panini Select", "Donruss Optic"),
    "Panini Select": ("Panini Prizm", "Panini Mosaic"),
    "Donruss Optic": ("Donruss", "Panini Prizm"),
    "Topps Chrome": ("Topps Chrome Sapphire", "Topps Finest", "Topps Chrome Black", "Topps"),
    "Topps Chrome Update": ("Topps Update", "Topps Chrome"),
    "Topps Update": ("Topps Chrome Update", "Topps"),
    "Bowman Chrome Draft": ("Bowman Draft", "Bowman Chrome"),
    "Bowman Chrome": ("Bowman", "Bowman Chrome Draft"),
    "Upper Deck Series 1": ("Upper Deck Series 2", "O-Pee-Chee", "SP Authentic"),
    "Upper Deck": ("Fleer", "Score"),
    "Topps": ("Topps Heritage", "Bowman"),
    "Fleer": ("Upper Deck", "NBA Hoops"),
    "O-Pee-Chee": ("Topps", "Upper Deck Series 1"),
    "Playoff Contenders": ("Panini Contenders", "Score"),
    "SP": ("SP Authentic", "Upper Deck"),
    "Goudey": ("Diamond Stars",),
}

INSERTS = (
    ("Rookie Kings", "RK-"), ("Instant Impact", "II-"), ("Color Blast", "CB-"),
    ("Downtown", "D-"), ("Kaboom!", "K-"), ("Future Stars", "FS-"), ("Prospects", "BCP-"),
)

JR_SR_PAIRS = (
    JrSr("Ken Griffey", "Ken Griffey Jr.", "Baseball", (1974, 1991), (1989, 2010)),
    JrSr("Fernando Tatis", "Fernando Tatis Jr.", "Baseball", (1997, 2010), (2019, 2025)),
    JrSr("Vladimir Guerrero", "Vladimir Guerrero Jr.", "Baseball", (1997, 2011), (2019, 2025)),
    JrSr("Bobby Witt", "Bobby Witt Jr.", "Baseball", (1986, 2001), (2022, 2025)),
    JrSr("Ronald Acuña", "Ronald Acuña Jr.", "Baseball", (1999, 2004), (2018, 2025)),
    JrSr("Cal Ripken", "Cal Ripken Jr.", "Baseball", (1985, 1988), (1982, 2001)),
    JrSr("Tim Hardaway", "Tim Hardaway Jr.", "Basketball", (1990, 2003), (2014, 2025)),
    JrSr("Larry Nance", "Larry Nance Jr.", "Basketball", (1982, 1994), (2016, 2025)),
    JrSr("Jaren Jackson", "Jaren Jackson Jr.", "Basketball", (1990, 2002), (2019, 2025)),
    JrSr("Gary Trent", "Gary Trent Jr.", "Basketball", (1996, 2004), (2019, 2025)),
    JrSr("Kelvin Harrison", "Kelvin Harrison Jr.", "Football", (1996, 2000), (2020, 2025)),
    JrSr("Marvin Harrison", "Marvin Harrison Jr.", "Football", (1996, 2009), (2024, 2025)),
)

FIRST_NAMES = (
    "Aaron", "Adrian", "Alex", "Andre", "Anthony", "Austin", "Blake", "Brandon", "Brady", "Caleb",
    "Cameron", "Carlos", "Carter", "Chase", "Chris", "Cody", "Colton", "Connor", "Dalton", "Damon",
    "Dante", "Darius", "Derrick", "Devon", "Dylan", "Eli", "Emilio", "Evan", "Felix", "Gabriel",
    "Garrett", "Grant", "Hunter", "Isaiah", "Jace", "Jalen", "Jamal", "Javier", "Jordan", "Josiah",
    "Julian", "Kai", "Keegan", "Kendall", "Kyle", "Landon", "Logan", "Lucas", "Malik", "Marcus",
    "Mason", "Mateo", "Miles", "Nolan", "Omar", "Owen", "Parker", "Quentin", "Rafael", "Reed",
    "Riley", "Rowan", "Ryder", "Santiago", "Silas", "Tanner", "Terrell", "Trey", "Tristan",
    "Tyson", "Victor", "Wade", "Wesley", "Xavier", "Yusuf", "Zane",
)
LAST_NAMES = (
    "Abbott", "Alcantara", "Baines", "Barrow", "Beckett", "Bishop", "Blackwood", "Booker",
    "Bramlett", "Calloway", "Cardenas", "Carrington", "Castellanos", "Coleman", "Crowder",
    "Dawkins", "Delgado", "Donnelly", "Easton", "Ellison", "Espinoza", "Fairbanks", "Fontaine",
    "Gallagher", "Garrison", "Goodwin", "Granger", "Hadley", "Halvorsen", "Harlow", "Hawthorne",
    "Holloway", "Ibarra", "Jennings", "Kessler", "Kincaid", "Lacroix", "Langford", "Lockhart",
    "Lowry", "Maddox", "Marchetti", "McCallister", "Mendoza", "Merriweather", "Montague",
    "Nakamura", "Navarro", "Northcutt", "Okafor", "Ortega", "Pemberton", "Prescott", "Quintero",
    "Radcliffe", "Ramsey", "Rendon", "Rutledge", "Salazar", "Sandoval", "Sheffield", "Sinclair",
    "Stallworth", "Sutherland", "Takahashi", "Thornton", "Townsend", "Underwood", "Valdez",
    "Vance", "Villanueva", "Wakefield", "Whitfield", "Winslow", "Yarbrough", "Zamora",
)
NAME_SUFFIXES = ("Jr.", "II", "III")

# Pokémon reprints: set -> ((sibling set, year, size, finishes, number offset), ...)
TCG_REPRINTS: dict[str, tuple[tuple[str, int, int, tuple[str, ...], int], ...]] = {
    "Base Set": (("Base Set 2", 2000, 130, ("Holo",), 0),
                 ("Legendary Collection", 2002, 110, ("Holo", "Reverse Holo"), 0)),
    "Jungle": (("Base Set 2", 2000, 130, ("Holo",), 16),
               ("Legendary Collection", 2002, 110, ("Holo", "Reverse Holo"), 16)),
    "Fossil": (("Legendary Collection", 2002, 110, ("Holo", "Reverse Holo"), 32),),
    "Team Rocket": (("Legendary Collection", 2002, 110, ("Holo", "Reverse Holo"), 48),),
    "Neo Genesis": (("Neo Revelation", 2001, 66, ("1st Edition Holo", "Unlimited Holo"), 0),
                    ("Neo Discovery", 2001, 75, ("1st Edition Holo", "Unlimited Holo"), 0)),
}
# Pokémon sets: (name, year, printed size, number prefix, editions era)
TCG_SETS = (
    ("Gym Heroes", 2000, 132, "", "wotc"), ("Gym Challenge", 2000, 132, "", "wotc"),
    ("Neo Destiny", 2002, 105, "", "wotc"), ("Expedition Base Set", 2002, 165, "", "ecard"),
    ("Aquapolis", 2003, 147, "", "ecard"), ("Skyridge", 2003, 144, "", "ecard"),
    ("EX Ruby & Sapphire", 2003, 109, "", "ex"), ("EX Team Rocket Returns", 2004, 109, "", "ex"),
    ("EX Dragon Frontiers", 2006, 101, "", "ex"), ("Diamond & Pearl", 2007, 130, "", "plain"),
    ("XY Evolutions", 2016, 108, "", "xy"), ("Shining Legends", 2017, 73, "", "sm"),
    ("Hidden Fates", 2019, 68, "", "sm"), ("Cosmic Eclipse", 2019, 236, "", "sm"),
    ("Champion's Path", 2020, 73, "", "swsh"), ("Vivid Voltage", 2020, 185, "", "swsh"),
    ("Shining Fates", 2021, 72, "", "swsh"), ("Chilling Reign", 2021, 198, "", "swsh"),
    ("Evolving Skies", 2021, 203, "", "swsh"), ("Fusion Strike", 2021, 264, "", "swsh"),
    ("Brilliant Stars", 2022, 172, "", "swsh"), ("Lost Origin", 2022, 196, "", "swsh"),
    ("Silver Tempest", 2022, 195, "", "swsh"), ("Crown Zenith", 2023, 159, "", "swsh"),
    ("Scarlet & Violet", 2023, 198, "", "sv"), ("Paldea Evolved", 2023, 193, "", "sv"),
    ("Obsidian Flames", 2023, 197, "", "sv"), ("Scarlet & Violet 151", 2023, 165, "", "sv"),
    ("Paradox Rift", 2023, 182, "", "sv"), ("Paldean Fates", 2024, 91, "", "sv"),
    ("Temporal Forces", 2024, 162, "", "sv"), ("Twilight Masquerade", 2024, 167, "", "sv"),
    ("Stellar Crown", 2024, 142, "", "sv"), ("Surging Sparks", 2024, 191, "", "sv"),
    ("Prismatic Evolutions", 2025, 131, "", "sv"), ("Journey Together", 2025, 159, "", "sv"),
)
TCG_SIBLINGS: dict[str, tuple[str, ...]] = {
    "Hidden Fates": ("Shining Fates", "Shining Legends"),
    "Evolving Skies": ("Chilling Reign", "Fusion Strike"),
    "Scarlet & Violet 151": ("Scarlet & Violet", "Obsidian Flames"),
    "Crown Zenith": ("Silver Tempest", "Lost Origin"),
    "Paldean Fates": ("Paldea Evolved", "Shining Fates"),
    "Prismatic Evolutions": ("Surging Sparks", "Journey Together"),
}
ERA_SUFFIXES = {"ex": ("", " ex"), "xy": ("", " EX"), "sm": ("", " GX"),
                "swsh": ("", " V", " VMAX", " VSTAR"), "sv": ("", " ex")}
TCG_FINISHES = ("Holo", "Reverse Holo", "Full Art", "Double Rare", "Ultra Rare")
TCG_SECRET_FINISHES = ("Illustration Rare", "Special Illustration Rare", "Hyper Rare",
                       "Secret Rare", "Alternate Art Secret")
POKEMON = (
    "Bulbasaur", "Ivysaur", "Venusaur", "Charmander", "Charmeleon", "Charizard", "Squirtle",
    "Wartortle", "Blastoise", "Pikachu", "Raichu", "Vulpix", "Ninetales", "Jigglypuff", "Oddish",
    "Psyduck", "Golduck", "Growlithe", "Arcanine", "Poliwrath", "Abra", "Kadabra", "Alakazam",
    "Machamp", "Ponyta", "Rapidash", "Slowbro", "Magneton", "Haunter", "Gengar", "Onix",
    "Cubone", "Hitmonlee", "Lickitung", "Chansey", "Tangela", "Kangaskhan", "Starmie", "Scyther",
    "Jynx", "Electabuzz", "Magmar", "Pinsir", "Tauros", "Magikarp", "Gyarados", "Lapras",
    "Ditto", "Eevee", "Vaporeon", "Jolteon", "Flareon", "Porygon", "Omastar", "Kabutops",
    "Aerodactyl", "Snorlax", "Articuno", "Zapdos", "Moltres", "Dratini", "Dragonair",
    "Dragonite", "Mewtwo", "Mew", "Typhlosion", "Feraligatr", "Meganium", "Ampharos", "Espeon",
    "Umbreon", "Scizor", "Heracross", "Tyranitar", "Lugia", "Ho-Oh", "Celebi", "Blaziken",
    "Gardevoir", "Salamence", "Metagross", "Rayquaza", "Jirachi", "Deoxys", "Lucario",
    "Garchomp", "Darkrai", "Giratina", "Arceus", "Zoroark", "Greninja", "Sylveon", "Mimikyu",
    "Lunala", "Solgaleo", "Zacian", "Zamazenta", "Eternatus", "Dragapult", "Miraidon",
    "Koraidon", "Iron Valiant", "Roaring Moon", "Terapagos", "Pecharunt", "Tinkaton",
)

# Comics: runs of issues (publisher, series, volume, first issue, last issue, first year)
COMIC_RUNS_EXT = (
    ("Marvel", "The Amazing Spider-Man", 1999, 1, 58, 1999),
    ("Marvel", "The Amazing Spider-Man", 2014, 1, 18, 2014),
    ("Marvel", "The Amazing Spider-Man", 2022, 1, 60, 2022),
    ("Marvel", "The Spectacular Spider-Man", 1976, 1, 263, 1976),
    ("Marvel", "Web of Spider-Man", 1985, 1, 129, 1985),
    ("Marvel", "Spider-Man", 1990, 1, 98, 1990),
    ("Marvel", "X-Men", 2010, 1, 41, 2010),
    ("Marvel", "X-Men", 2019, 1, 21, 2019),
    ("Marvel", "The Uncanny X-Men", 1963, 100, 199, 1976),
    ("Marvel", "X-Force", 1991, 1, 129, 1991),
    ("Marvel", "Wolverine", 1988, 1, 189, 1988),
    ("Marvel", "The Incredible Hulk", 1962, 182, 474, 1974),
    ("Marvel", "Hulk", 2008, 1, 57, 2008),
    ("Marvel", "Daredevil", 1998, 1, 119, 1998),
    ("Marvel", "Daredevil", 2019, 1, 36, 2019),
    ("Marvel", "Star Wars", 1977, 2, 107, 1977),
    ("Marvel", "Star Wars", 2015, 1, 75, 2015),
    ("Marvel", "Star Wars", 2020, 1, 50, 2020),
    ("Marvel", "The New Mutants", 1983, 1, 100, 1983),
    ("Marvel", "Venom", 2021, 1, 39, 2021),
    ("DC", "Batman", 2011, 1, 52, 2011),
    ("DC", "Detective Comics", 2016, 934, 1090, 2016),
    ("DC", "Action Comics", 1938, 500, 904, 1979),
    ("DC", "Action Comics", 2011, 1, 52, 2011),
    ("DC", "The Batman Adventures", 1992, 1, 36, 1992),
    ("DC", "Justice League", 2011, 1, 52, 2011),
    ("DC", "Swamp Thing", 1982, 1, 171, 1982),
    ("DC", "The New Teen Titans", 1980, 1, 91, 1980),
    ("Image", "The Walking Dead", 2003, 2, 193, 2003),
    ("Image", "Invincible", 2003, 2, 144, 2003),
    ("Image", "Saga", 2012, 2, 66, 2012),
    ("Image", "King Spawn", 2021, 1, 35, 2021),
    ("BOOM! Studios", "Something Is Killing the Children", 2019, 2, 40, 2019),
    ("Dark Horse", "Hellboy: Seed of Destruction", 1994, 2, 4, 1994),
)
COMIC_SIBLINGS: dict[str, tuple[str, ...]] = {
    "The Amazing Spider-Man": ("The Spectacular Spider-Man", "Web of Spider-Man"),
    "X-Men": ("The Uncanny X-Men", "X-Force"),
    "The Incredible Hulk": ("Hulk",),
    "Batman": ("Detective Comics", "The Batman Adventures"),
    "Batman Adventures": ("The Batman Adventures", "Batman"),
    "Action Comics": ("Detective Comics",),
    "Spawn": ("King Spawn",),
    "The New Mutants": ("X-Force",),
    "Ultimate Fallout": ("Ultimate Comics Spider-Man",),
    "Edge of Spider-Verse": ("Spider-Gwen",),
    "Giant-Size X-Men": ("Giant-Size Spider-Man",),
}
# Other volumes of a series: series -> volume start years (issue N of volume V came out V + N/12)
COMIC_VOLUMES: dict[str, tuple[int, ...]] = {
    "The Amazing Spider-Man": (1999, 2014, 2018, 2022), "X-Men": (2010, 2019, 2024),
    "Batman": (2011, 2016), "Action Comics": (2011,), "Star Wars": (2015, 2020),
    "Daredevil": (1998, 2019), "Venom": (2018, 2021), "The New Mutants": (2019,),
    "Spawn": (1992,), "The Incredible Hulk": (2023,), "Detective Comics": (2011,),
}
MODERN_COVERS = ("Cover A", "Cover B", "Cover C", "1:10 Variant", "1:25 Variant", "1:50 Variant",
                 "1:100 Variant", "Virgin Variant", "Foil Variant", "2nd Printing", "3rd Printing")
DIRECT_COVERS = ("Direct Edition", "Newsstand", "2nd Printing", "Canadian Price Variant")
VINTAGE_COVERS = ("", "UK Price Variant", "30 Cent Price Variant", "35 Cent Price Variant")

# More U.S. coin types, shaped like names.COIN_TYPES
COIN_TYPES_EXT = {
    "Indian Head Cent": ("1C", 1859, 1909, ("",), 200, 2000, ("RD", "RB", "BN")),
    "Liberty Head Nickel": ("5C", 1883, 1912, ("",), 400, 3800, ("", "PL")),
    "Jefferson Nickel": ("5C", 1938, 2025, ("", "D", "S"), 100, 4000, ("", "5FS")),
    "Barber Dime": ("10C", 1892, 1916, ("", "O", "S"), 500, 4800, ("",)),
    "Roosevelt Dime": ("10C", 1946, 2025, ("", "D"), 100, 5000, ("", "FB")),
    "Washington Quarter": ("25C", 1932, 1998, ("", "D", "S"), 300, 5790, ("",)),
    "Barber Half Dollar": ("50C", 1892, 1915, ("", "O", "S"), 2000, 6460, ("",)),
    "Franklin Half Dollar": ("50C", 1948, 1963, ("", "D", "S"), 900, 6650, ("", "FBL")),
    "Kennedy Half Dollar": ("50C", 1964, 2025, ("", "D"), 300, 6700, ("",)),
    "Trade Dollar": ("T$1", 1873, 1885, ("", "S", "CC"), 20000, 7030, ("",)),
    "Seated Liberty Dollar": ("$1", 1840, 1873, ("", "O", "S"), 40000, 6930, ("",)),
    "Indian Head Eagle": ("$10", 1907, 1933, ("", "D", "S"), 90000, 8850, ("",)),
    "Liberty Head Double Eagle": ("$20", 1850, 1907, ("", "S", "O", "CC"), 200000, 8900, ("",)),
}

# Noise (docs/domain.md#title-noise-and-red-flags): what sellers put around the identity
EMOJI = ("🔥", "💎", "📈", "🚀", "🔥🔥", "💎🙌", "⚾", "🏀", "⭐")
HYPE = ("L@@K", "INVEST", "HOF", "RARE", "MUST SEE", "HOT", "GOAT", "SSP", "🔑 KEY", "WOW")
RAW_WORDS = ("NM", "Raw", "Near Mint", "NM-MT", "Pack Fresh", "Ungraded")
NEGATED = ("Raw NOT PSA", "NOT PSA BGS", "raw - not graded NOT PSA", "not CGC")
SPECULATIVE = ("PSA 10?", "PSA 10 candidate?", "BGS 9.5?", "gem candidate")
COMPS = ("PSA 10 comp", "psa 9 comp", "BGS 9.5 comp", "see comps")
CARD_GRADES = (("PSA", "10", "GEM MINT"), ("PSA", "9", "MINT"), ("PSA", "8", "NM-MT"),
               ("PSA", "7", "NM"), ("BGS", "9.5", "GEM MINT"), ("BGS", "9", "MINT"),
               ("SGC", "10", "GEM"), ("SGC", "9.5", "MINT+"), ("CGC", "10", "Pristine"),
               ("CGC", "9.5", "Mint+"))
COMIC_GRADES = (("CGC", "9.8", "White Pages"), ("CGC", "9.6", ""), ("CGC", "9.4", "NM"),
                ("CGC SS", "9.8", "Signed"), ("CBCS", "9.6", ""), ("CGC", "8.5", "VF+"))
COIN_GRADES = (("PCGS", "MS65", ""), ("NGC", "MS64", ""), ("PCGS", "MS66+", ""),
               ("NGC", "PF69", "Ultra Cameo"), ("PCGS", "AU58", "CAC"), ("NGC", "XF45", ""),
               ("PCGS", "MS63", "Gold Shield"), ("NGC", "MS67", "Star"))
# fmt: on
