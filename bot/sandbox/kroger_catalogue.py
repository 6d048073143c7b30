"""What the Kroger stand-in sells: a handful of stores near a few ZIP codes, and 387 products.

The products are 129 grocery lines (the last 29 added for what the offline shopper's recipes
buy, at the end so that the earlier lines' UPCs stay what they were), each in three brands (the
store's own ``Kroger``, its organic ``Simple Truth Organic`` and a national brand), so a search
finds a choice of sizes and prices as it does at a real store. Each has a 13-digit UPC (the
API's ``productId`` and ``upc`` are both 13 digits in every answer we found), a size as the
shelf label says it ("16 oz", "1 gal", "12 ct"), an aisle and a regular price. What a product
costs and whether it is on the shelf depends on the store (:func:`at_store`): the price varies a
little from store to store, about one product in six is on promotion, about one in ten is low
and one in twelve temporarily out of stock (``inventory.stockLevel`` is ``HIGH``, ``LOW`` or
``TEMPORARILY_OUT_OF_STOCK``), and about one in twenty is not carried there at all. All of it is
a function of the store and the UPC, so every run sees the same shop.

ZIP ``10001`` (Manhattan) has no store: Kroger has none in New York City, and its API answers an
empty list for a ZIP with no store in range.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

STORES: dict[str, tuple[dict[str, Any], ...]] = {}


def _store(zip_code: str, location_id: str, chain: str, name: str, line1: str, city: str,
           state: str, phone: str) -> None:  # fmt: skip
    entry = {
        "locationId": location_id,
        "storeNumber": location_id[-3:],
        "divisionNumber": location_id[:3],
        "chain": chain,
        "name": name,
        "phone": phone,
        "address": {"addressLine1": line1, "city": city, "state": state, "zipCode": zip_code},
    }
    STORES[zip_code] = (*STORES.get(zip_code, ()), entry)


_store("45202", "01400943", "KROGER", "Kroger - Over-the-Rhine", "1420 Vine St", "Cincinnati",
       "OH", "5132414650")  # fmt: skip
_store("45202", "01400376", "KROGER", "Kroger - Corryville", "100 E Corry St", "Cincinnati",
       "OH", "5135590600")  # fmt: skip
_store("45202", "01400441", "KROGER", "Kroger - Walnut Hills", "2620 Victory Pkwy",
       "Cincinnati", "OH", "5132810220")  # fmt: skip
_store("30308", "01100482", "KROGER", "Kroger - Ponce de Leon", "725 Ponce De Leon Ave NE",
       "Atlanta", "GA", "4048751567")  # fmt: skip
_store("30308", "01100685", "KROGER", "Kroger - Midtown", "1700 Monroe Dr NE", "Atlanta", "GA",
       "4048726287")  # fmt: skip
_store("98109", "70500847", "QFC", "QFC - Broadway Market", "417 Broadway E", "Seattle", "WA",
       "2068601000")  # fmt: skip
_store("98109", "70100140", "FRED", "Fred Meyer - Ballard", "915 NW 45th St", "Seattle", "WA",
       "2062975600")  # fmt: skip
_store("80202", "62000115", "KINGSOOPERS", "King Soopers - Speer", "890 N Washington St",
       "Denver", "CO", "3037788500")  # fmt: skip
STORES["10001"] = ()

# aisle | category | what it is | size | Kroger's regular price | the national brand
_LINES = """\
Produce|Produce|Bananas|2 lb|1.18|Dole
Produce|Produce|Gala Apples|3 lb|4.99|Rainier
Produce|Produce|Navel Oranges|4 lb|5.99|Sunkist
Produce|Produce|Lemons|2 lb|3.99|Sunkist
Produce|Produce|Red Bell Peppers|3 ct|4.49|Nature Fresh
Produce|Produce|Broccoli Crowns|1 lb|2.49|Mann's
Produce|Produce|Carrots|2 lb|1.99|Grimmway
Produce|Produce|Yellow Onions|3 lb|3.49|Vidalia
Produce|Produce|Garlic Bulbs|3 ct|1.99|Christopher Ranch
Produce|Produce|Russet Potatoes|5 lb|4.29|Idaho
Produce|Produce|Sweet Potatoes|3 lb|3.99|Nash
Produce|Produce|Baby Spinach|5 oz|3.49|Earthbound Farm
Produce|Produce|Romaine Hearts|3 ct|3.79|Tanimura & Antle
Produce|Produce|Cremini Mushrooms|8 oz|2.79|Monterey
Produce|Produce|Roma Tomatoes|1 lb|1.69|Houweling's
Produce|Produce|Cucumbers|2 ct|1.58|Mastronardi
Produce|Produce|Avocados|4 ct|4.99|Mission
Produce|Produce|Zucchini Squash|1 lb|1.79|Growers Express
Produce|Produce|Fresh Cilantro|1 bunch|0.99|Cal-Organic
Produce|Produce|Green Beans|12 oz|2.99|Green Giant
Meat & Seafood|Meat & Seafood|Boneless Skinless Chicken Breasts|1.5 lb|6.74|Perdue
Meat & Seafood|Meat & Seafood|Boneless Skinless Chicken Thighs|1.25 lb|5.61|Tyson
Meat & Seafood|Meat & Seafood|80% Lean Ground Beef|1 lb|5.49|Laura's Lean
Meat & Seafood|Meat & Seafood|93% Lean Ground Turkey|1 lb|5.99|Jennie-O
Meat & Seafood|Meat & Seafood|Pork Loin Chops|1.5 lb|6.29|Smithfield
Meat & Seafood|Meat & Seafood|Atlantic Salmon Fillets|12 oz|9.99|Blue Circle
Meat & Seafood|Meat & Seafood|Raw Shrimp|16 oz|8.99|SeaPak
Meat & Seafood|Meat & Seafood|Thick Cut Bacon|16 oz|6.99|Oscar Mayer
Meat & Seafood|Meat & Seafood|Italian Sausage Links|19 oz|5.49|Johnsonville
Meat & Seafood|Deli|Sliced Turkey Breast|9 oz|4.99|Hillshire Farm
Aisle 12|Dairy|2% Reduced Fat Milk|1 gal|3.79|Horizon
Aisle 12|Dairy|Whole Milk|0.5 gal|2.29|Fairlife
Aisle 12|Dairy|Large Grade A Eggs|12 ct|2.99|Eggland's Best
Aisle 12|Dairy|Salted Butter|16 oz|4.49|Land O Lakes
Aisle 12|Dairy|Plain Greek Yogurt|32 oz|5.49|Chobani
Aisle 12|Dairy|Shredded Mozzarella Cheese|8 oz|2.50|Sargento
Aisle 12|Dairy|Sharp Cheddar Cheese Block|8 oz|2.50|Tillamook
Aisle 12|Dairy|Grated Parmesan Cheese|8 oz|4.29|Kraft
Aisle 12|Dairy|Sour Cream|16 oz|2.19|Daisy
Aisle 12|Dairy|Heavy Whipping Cream|1 pt|3.99|Horizon
Aisle 12|Dairy|Cream Cheese|8 oz|1.99|Philadelphia
Aisle 12|Dairy|Unsweetened Almond Milk|0.5 gal|3.29|Silk
Aisle 12|Dairy|Orange Juice|52 fl oz|3.99|Tropicana
Aisle 12|Dairy|Feta Cheese Crumbles|4 oz|3.29|Athenos
Aisle 1|Bakery|Whole Wheat Sandwich Bread|20 oz|2.49|Nature's Own
Aisle 1|Bakery|White Sandwich Bread|20 oz|1.79|Wonder
Aisle 1|Bakery|Flour Tortillas|10 ct|2.79|Mission
Aisle 1|Bakery|Pizza Crusts|2 ct|3.99|Boboli
Aisle 1|Bakery|Hamburger Buns|8 ct|1.99|Sara Lee
Aisle 1|Bakery|Plain Bagels|6 ct|2.99|Thomas'
Aisle 4|Pasta, Sauces & Grain|Spaghetti|16 oz|1.25|Barilla
Aisle 4|Pasta, Sauces & Grain|Penne Rigate|16 oz|1.25|Barilla
Aisle 4|Pasta, Sauces & Grain|Long Grain White Rice|32 oz|2.79|Mahatma
Aisle 4|Pasta, Sauces & Grain|Brown Rice|32 oz|2.99|Uncle Ben's
Aisle 4|Pasta, Sauces & Grain|Basmati Rice|32 oz|4.99|Royal
Aisle 4|Pasta, Sauces & Grain|Marinara Pasta Sauce|24 oz|2.49|Rao's
Aisle 4|Pasta, Sauces & Grain|Quinoa|12 oz|3.99|Bob's Red Mill
Aisle 4|Pasta, Sauces & Grain|Egg Noodles|12 oz|1.99|Pennsylvania Dutch
Aisle 5|Canned & Packaged|Diced Tomatoes|14.5 oz|0.89|Hunt's
Aisle 5|Canned & Packaged|Crushed Tomatoes|28 oz|1.79|Cento
Aisle 5|Canned & Packaged|Tomato Paste|6 oz|0.79|Contadina
Aisle 5|Canned & Packaged|Black Beans|15 oz|0.89|Bush's
Aisle 5|Canned & Packaged|Garbanzo Beans|15 oz|0.89|Goya
Aisle 5|Canned & Packaged|Red Kidney Beans|15 oz|0.89|Bush's
Aisle 5|Canned & Packaged|Red Lentils|16 oz|2.49|Goya
Aisle 5|Canned & Packaged|Chicken Broth|32 oz|2.29|Swanson
Aisle 5|Canned & Packaged|Vegetable Broth|32 oz|2.29|Pacific Foods
Aisle 5|Canned & Packaged|Coconut Milk|13.5 fl oz|1.99|Thai Kitchen
Aisle 5|Canned & Packaged|Chunk Light Tuna|5 oz|1.09|StarKist
Aisle 5|Canned & Packaged|Sweet Corn|15.25 oz|0.89|Del Monte
Aisle 6|Condiments & Oils|Extra Virgin Olive Oil|16.9 fl oz|6.99|Bertolli
Aisle 6|Condiments & Oils|Vegetable Oil|48 fl oz|3.99|Crisco
Aisle 6|Condiments & Oils|Soy Sauce|15 fl oz|2.49|Kikkoman
Aisle 6|Condiments & Oils|Mayonnaise|30 fl oz|3.99|Hellmann's
Aisle 6|Condiments & Oils|Ketchup|32 oz|2.29|Heinz
Aisle 6|Condiments & Oils|Yellow Mustard|14 oz|1.19|French's
Aisle 6|Condiments & Oils|Creamy Peanut Butter|16 oz|2.29|Jif
Aisle 6|Condiments & Oils|Honey|12 oz|4.49|Nature Nate's
Aisle 6|Condiments & Oils|Red Wine Vinegar|16 fl oz|2.19|Pompeian
Aisle 6|Condiments & Oils|Salsa Medium|16 oz|2.79|Pace
Aisle 7|Baking & Spices|All Purpose Flour|5 lb|2.79|Gold Medal
Aisle 7|Baking & Spices|Granulated Sugar|4 lb|3.49|Domino
Aisle 7|Baking & Spices|Iodized Salt|26 oz|0.89|Morton
Aisle 7|Baking & Spices|Ground Black Pepper|3 oz|2.99|McCormick
Aisle 7|Baking & Spices|Ground Cumin|1.5 oz|2.49|McCormick
Aisle 7|Baking & Spices|Chili Powder|2.5 oz|2.29|McCormick
Aisle 7|Baking & Spices|Baking Soda|16 oz|1.09|Arm & Hammer
Aisle 7|Baking & Spices|Semi-Sweet Chocolate Chips|12 oz|2.99|Nestle Toll House
Aisle 8|Breakfast|Old Fashioned Oats|42 oz|4.49|Quaker
Aisle 8|Breakfast|Honey Nut Toasted Oats Cereal|12 oz|2.99|Cheerios
Aisle 8|Breakfast|Ground Coffee Medium Roast|12 oz|6.99|Folgers
Aisle 8|Breakfast|Black Tea Bags|100 ct|3.99|Lipton
Aisle 8|Breakfast|Strawberry Preserves|18 oz|2.79|Smucker's
Aisle 9|Snacks|Tortilla Chips|13 oz|2.99|Tostitos
Aisle 9|Snacks|Salted Roasted Almonds|16 oz|6.99|Blue Diamond
Aisle 9|Snacks|Original Hummus|10 oz|3.49|Sabra
Aisle 20|Frozen|Frozen Peas|12 oz|1.25|Birds Eye
Aisle 20|Frozen|Frozen Mixed Berries|16 oz|3.99|Wyman's
Aisle 20|Frozen|Vanilla Ice Cream|48 fl oz|3.49|Breyers
Aisle 20|Frozen|Frozen Broccoli Florets|12 oz|1.49|Green Giant
Produce|Produce|Iceberg Lettuce|1 head|1.99|Fresh Express
Produce|Produce|Limes|1 lb|2.49|Sunkist
Produce|Produce|Green Onions|1 bunch|0.89|Cal-Organic
Produce|Produce|Leeks|1 lb|2.99|Cal-Organic
Produce|Produce|Shallots|8 oz|2.99|Christopher Ranch
Produce|Produce|Asparagus|1 lb|3.99|Green Giant
Produce|Produce|Fresh Basil|0.75 oz|2.49|Shenandoah
Produce|Produce|Ginger Root|8 oz|1.99|Melissa's
Produce|Produce|Spring Salad Mix|5 oz|3.99|Earthbound Farm
Produce|Produce|Baby Potatoes|1.5 lb|3.99|Little Potato
Produce|Produce|Bean Sprouts|12 oz|2.49|Jack & the Green Sprouts
Meat & Seafood|Meat & Seafood|Beef Stew Meat|1 lb|6.99|Certified Angus
Meat & Seafood|Meat & Seafood|Sirloin Steak|1 lb|9.99|Certified Angus
Meat & Seafood|Meat & Seafood|Whole Chicken|4.5 lb|7.99|Perdue
Meat & Seafood|Meat & Seafood|Cod Fillets|12 oz|8.99|Trident
Meat & Seafood|Meat & Seafood|Ground Lamb|1 lb|8.99|Superior Farms
Aisle 7|International|Hard Taco Shells|12 ct|2.29|Old El Paso
Aisle 7|International|Fajita Seasoning|1.12 oz|1.29|McCormick
Aisle 7|International|Red Curry Paste|4 oz|2.99|Thai Kitchen
Aisle 7|International|Green Curry Paste|4 oz|2.99|Thai Kitchen
Aisle 7|International|Rice Noodles|14 oz|2.99|Thai Kitchen
Aisle 7|International|Ramen Noodles|10 oz|3.49|Hakubaku
Aisle 4|Pasta, Sauces & Grain|Elbow Macaroni|16 oz|1.49|Barilla
Aisle 4|Pasta, Sauces & Grain|Lasagna Noodles|16 oz|2.29|Barilla
Aisle 4|Pasta, Sauces & Grain|Potato Gnocchi|16 oz|2.99|De Cecco
Aisle 4|Pasta, Sauces & Grain|Arborio Rice|32 oz|5.99|RiceSelect
Aisle 1|Bakery|Pita Bread|6 ct|2.99|Toufayan
Aisle 12|Dairy|Original Oat Milk|0.5 gal|4.49|Oatly
Aisle 14|Household|Toilet Paper Mega Rolls|12 ct|12.99|Charmin
"""

# (brand, the first 8 of its UPCs' 13 digits); "" is each line's national brand
BRANDS = (("Kroger", "00011110"), ("Simple Truth Organic", "00011111"), ("", "00070000"))
FACTORS = {"Kroger": 1.0, "Simple Truth Organic": 1.45, "": 1.25}
STOCK_LEVELS = ("HIGH", "LOW", "TEMPORARILY_OUT_OF_STOCK")


@dataclass(frozen=True)
class Product:
    """One product as the catalogue knows it, before a store prices it."""

    upc: str
    brand: str
    description: str
    category: str
    aisle: str
    size: str
    price: float  # a typical regular price; each store's differs a little


def _catalogue() -> tuple[Product, ...]:
    found: list[Product] = []
    for i, row in enumerate(_LINES.strip().splitlines()):
        aisle, category, what, size, price, national = row.split("|")
        for brand, prefix in BRANDS:
            name = brand or national
            found.append(
                Product(
                    upc=f"{prefix}{i:05d}",
                    brand=name,
                    description=f"{name} {what}",
                    category=category,
                    aisle=aisle,
                    size=size,
                    price=round(float(price) * FACTORS[brand], 2),
                )
            )
    return tuple(found)


CATALOGUE = _catalogue()
BY_UPC = {product.upc: product for product in CATALOGUE}
LOCATIONS = {entry["locationId"]: entry for stores in STORES.values() for entry in stores}


def _roll(location_id: str, upc: str, what: str) -> int:
    """A number 0–9999 fixed by the store, the product and what is being decided."""
    digest = hashlib.sha256(f"{location_id}:{upc}:{what}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 10_000


def carried(location_id: str, upc: str) -> bool:
    """Whether the store sells the product at all (about 19 in 20 are)."""
    return _roll(location_id, upc, "carried") >= 500


def at_store(product: Product, location_id: str) -> dict[str, Any]:
    """The product as the Products API answers it with ``filter.locationId``: its price at that
    store (``promo`` 0 when there is no promotion, as Kroger's answers show it), its stock level,
    its aisle and which fulfilment the store offers for it."""
    regular = round(product.price * (0.92 + _roll(location_id, product.upc, "price") / 55_000), 2)
    on_promo = _roll(location_id, product.upc, "promo") < 1_700
    promo = round(regular * 0.8, 2) if on_promo else 0
    stock = _roll(location_id, product.upc, "stock")
    level = STOCK_LEVELS[0 if stock >= 1_800 else 1 if stock >= 800 else 2]
    aisle = product.aisle.removeprefix("Aisle ")
    return {
        "productId": product.upc,
        "upc": product.upc,
        "brand": product.brand,
        "categories": [product.category],
        "description": product.description,
        "aisleLocations": [
            {"description": product.aisle, "number": aisle if aisle.isdigit() else ""}
        ],
        "items": [
            {
                "itemId": product.upc,
                "size": product.size,
                "soldBy": "UNIT",
                "price": {"regular": regular, "promo": promo},
                "inventory": {"stockLevel": level},
                "fulfillment": {"curbside": True, "delivery": True, "inStore": True},
            }
        ],
    }


def unpriced(product: Product) -> dict[str, Any]:
    """The product as the Products API answers it without a store: no price, stock or aisle."""
    return {
        "productId": product.upc,
        "upc": product.upc,
        "brand": product.brand,
        "categories": [product.category],
        "description": product.description,
        "items": [{"itemId": product.upc, "size": product.size, "soldBy": "UNIT"}],
    }


def search(term: str) -> list[Product]:
    """Products whose description or category holds every word of ``term`` (a plural's ``s``
    ignored), best first: those whose description holds them all, then by description."""
    words = [w.lower().rstrip("s") for w in term.split()]

    def has(text: str) -> bool:
        lower = text.lower()
        return all(word in lower for word in words)

    found = [p for p in CATALOGUE if has(f"{p.description} {p.category}")]
    return sorted(found, key=lambda p: (not has(p.description), p.description))
