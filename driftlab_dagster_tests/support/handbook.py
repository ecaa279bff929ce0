"""A made-up company's handbook, built commit by commit into a fresh git repository: a corpus world for tests.

Thistlecombe Outfitters (renamed Thistlecombe Trail Company in January 2023) is an invented outdoor-gear
retailer with three shops and a web store; every name of a person, product, tool and place in it is invented.
Its handbook is a folder of markdown pages under `handbook/` whose history, from March 2021 to November
2024, carries every drift the study measures:

- renames: the company (C09), a product (Hollowpine 2P -> Cinderfell 2P, C10), an internal tool
  (Stockpot -> Larder, C07);
- numbers that change: the refund window (30 -> 45 -> 60 days, C03 and C16), the free-shipping threshold
  ($75 -> $99, C11), prices (Trailbox $18 -> $22 a day, C06; Cinderfell $289 -> $319, C10; Emberline stove
  $64 -> $69, C15), the member discount (10% -> 15%, C15) and the support reply time (48 -> 24 hours, C12);
- owners that change: the Checkout service (Web -> Commerce, C04), Stockpot/Larder (Platform -> Retail
  Systems, C07), and team leads (Customer Care, C12; Commerce, C13);
- a fact retired and reinstated: the 40% staff gear discount (gone in C06, back in C14);
- pages moved (the FAQ in C08 without a change; the tool and the tent pages with their renames) and deleted
  (the Trailbox rental page in C13, the old office page in C17);
- stale mentions: the FAQ quotes a 30-day refund window until C11 and 45 days again after C16; the returns
  how-to still says Stockpot; the office, holiday and catalog pages keep old names and prices;
- look-alike sentences next to the facts ("Special orders returned within 14 days are charged a 15%
  restocking fee" beside the refund window, the $39 footprint beside the tent price);
- meeting notes with draft numbers nobody approved ($60 free shipping, a $339 tent, a 20% member discount);
- restricted pages under `handbook/finance/` (audience finance) and `handbook/people/` (audience staff) with
  budgets and salary bands that no public page states.

`build_handbook(root)` writes the repository at `root/repo`, the world file `root/handbook.yaml` and the
questions file `root/handbook_questions.yaml` (a copy of the one next to this module), in the format of
docs/your-own-wiki.md. Every commit has a fixed author, committer and date, so the same code gives the same
commit ids.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

COMPANY = "Thistlecombe Trail Company"
FORMER_COMPANY = "Thistlecombe Outfitters"
QUESTIONS_SOURCE = Path(__file__).with_name("handbook_questions.yaml")
PATHS = ["handbook/**/*.md"]
AUDIENCE = {"handbook/finance/**": "finance", "handbook/people/**": "staff"}

# The study's checkpoints: the handbook as it stood at 00:00 UTC on each date. No commit falls on one.
CHECKPOINTS: tuple[dt.date, ...] = (
    dt.date(2021, 6, 1), dt.date(2022, 1, 1), dt.date(2022, 9, 1),
    dt.date(2023, 5, 1), dt.date(2024, 1, 1), dt.date(2024, 12, 1),
)

AUTHOR_NAME = "Thistlecombe Handbook"
AUTHOR_EMAIL = "handbook@thistlecombe.example"


# ----- the operations a commit is made of -----

@dataclass(frozen=True)
class Write:
    """Create or overwrite a page with this text."""
    path: str
    text: str


@dataclass(frozen=True)
class Replace:
    """Replace text in a page; `count` is how many times `old` must occur (a typo in the history fails loudly)."""
    path: str
    old: str
    new: str
    count: int = 1


@dataclass(frozen=True)
class Move:
    """`git mv` a page (a later Write or Replace on the new path changes it in the same commit)."""
    src: str
    dst: str


@dataclass(frozen=True)
class Delete:
    path: str


@dataclass(frozen=True)
class Commit:
    key: str          # C01..C17, as the module docstring and the tests name them
    when: str         # ISO 8601 in UTC, used as both author and committer date
    message: str
    changes: tuple


def _page(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


# ----- the pages as first written (March 2021) -----

INDEX = _page("""
    # Welcome to the Thistlecombe Outfitters handbook

    Thistlecombe Outfitters sells tents, stoves, jackets and everything else you need for a weekend outside,
    from three shops and a web store. This handbook is where we write down how we work. If something here is
    wrong, fix it: every page is a markdown file in this repository, and every change is reviewed by one
    other person.

    Thistlecombe Outfitters is led by Corentin Ashdown, who founded the company in 2014.

    ## Where to start

    - New here? Read [About us](about/company.md), [How we work](about/values.md) and the [glossary](about/glossary.md).
    - Talking to a customer? The [FAQ](faq.md) and the [refund policy](policies/refunds.md) answer most questions.
    - Looking for a team? Every team has a page under `teams/`.
    - Working in a shop? Start with [opening a shop](howto/open-a-shop.md).
    """)

COMPANY_PAGE = _page("""
    # About Thistlecombe Outfitters

    Thistlecombe Outfitters started in 2014 as a single shop on Mill Lane in Penlow Crossing, renting canvas
    tents to school groups. Today we run three shops (Penlow Crossing, Alder Quay and Sedgebury) and a web
    store that ships across the country.

    ## What we sell

    Mostly our own range: tents, stoves and shells designed in Penlow Crossing and made by two workshops we
    have worked with since the start. We also resell boots, maps and food from brands we trust.

    ## Who runs what

    Corentin Ashdown, our founder, leads the company. The day-to-day work is split between four teams:
    Stores, Web, Platform and Customer Care. Each has a page under `teams/`.
    """)

VALUES = _page("""
    # How we work

    **Repair first.** We would rather fix a jacket than sell a new one. Every shop has a repair bench, and
    everyone learns to patch a tent and re-thread a drawcord in their first month.

    **Say what you do not know.** A customer who is told "I will find out and call you back" comes back. A
    customer who is told something made up does not.

    **Write it down.** If you had to ask someone how to do a thing, add the answer to this handbook. Short
    pages are fine; missing pages are not.

    **Go outside.** Two volunteer days a year are paid, and the shops close early on the first Friday of
    summer so that everyone can get to a campsite before dark.
    """)

GLOSSARY = _page("""
    # Glossary

    Words you will hear in the shops, in meetings and on chat.

    - **Bench day**: the first Monday of the month, when each shop's repair bench takes walk-in repairs.
    - **Checkout service**: the service behind the web store's basket and payment pages.
    - **Open box**: an item that was pitched or tried on in the shop; sold at a markdown.
    - **Pitch test**: pitching a tent in the shop before it goes back on the shelf, to check for missing pegs.
    - **RMA**: return merchandise authorisation, the number a customer quotes when posting something back.
    - **Stockpot**: the inventory tool. If a stock number is wrong anywhere, Stockpot is where it came from.
    - **Trail Circle**: our membership program. Members pay a yearly fee and get money off full-price gear.
    - **Trailbox**: our rental program, a crate with a tent, a stove and two sleeping mats, rented by the day.
    """)

REFUNDS = _page("""
    # Refund policy

    _Owner: Customer Care. Last reviewed March 2021._

    Customers can request a refund within 30 days of purchase, in any shop or by post, as long as the item is
    unused or faulty. They need the receipt or the order number; we refund to the original payment method.

    ## What the refund window does not cover

    - Special orders returned within 14 days are charged a 15% restocking fee.
    - Gift cards are not refundable.
    - Worn footwear is exchanged, not refunded, unless it is faulty.

    ## Faulty items

    A faulty item can come back at any time within its two-year warranty. Send it to the repair bench first:
    most faults are fixed within a week, and the customer keeps the gear they chose.
    """)

SHIPPING = _page("""
    # Shipping policy

    Orders over $75 ship free. Smaller orders pay a flat $6.95 for standard delivery.

    | Service | Delivery time | Price |
    |---|---|---|
    | Standard | 3-5 business days | $6.95, free on orders over $75 |
    | Express | 1-2 business days | $14.95 |
    | Click and collect | next day, in any shop | free |

    We ship to every address in the country except PO boxes. Tents and stoves go by courier, everything else
    by post. Gas canisters never ship: they are click and collect only.

    Oversized items such as canoes and roof boxes ship at cost; the web store quotes the price at checkout.
    """)

MEMBERSHIP = _page("""
    # Trail Circle membership

    Trail Circle is our membership program. A Trail Circle membership costs $25 a year, and anyone can join
    in a shop or online.

    ## What members get

    - Trail Circle members get 10% off full-price gear, in the shops and online.
    - Free places at the Saturday skills workshops (map reading, stove care, pitching in the wind).
    - Early access to the spring and autumn sales.

    Membership renews every year on the date you joined. Members can cancel at any time; we do not refund
    the months that are left.

    ## Small print

    The member discount cannot be combined with sale prices or with the staff discount. A 5% discount on gift
    cards was tried for members in 2020 and stopped; it no longer applies.
    """)

SUPPORT = _page("""
    # Customer support standards

    Customer Care answers the phone from 9:00 to 17:30, Monday to Saturday. Email and web chat are answered by
    the same people, in the order they arrive.

    - Support replies to every customer email within 48 hours.
    - Complaints are escalated to the Customer Care lead the same day.
    - We never close a ticket without the customer's say-so.
    - A customer who has written three times about the same order gets a phone call instead of a fourth email.

    Shop staff can log a ticket for a customer from the till; Customer Care picks it up from there.
    """)

FAQ = _page("""
    # Frequently asked questions

    The questions customers ask us most, and the answers we give. If this page and a policy page disagree,
    the policy page is right.

    ### How long do I have to return something?
    You can get a refund within 30 days of purchase. Bring the receipt or quote your order number.

    ### Do you ship for free?
    Yes, on orders over $75. Smaller orders pay a flat $6.95.

    ### What does Trail Circle cost?
    $25 a year. Members get money off full-price gear and free places at the skills workshops.

    ### Can I rent a tent?
    Yes: ask for a Trailbox in any shop. It holds a tent, a stove and two sleeping mats.

    ### Do you repair gear you did not sell?
    Yes, at the repair bench, for a fee that depends on the job. Bring it on a bench day for a free quote.
    """)

CATALOG = _page("""
    # Product catalog

    Our own range, with list prices. The shops and the web store charge the same.

    | Product | Category | Price |
    |---|---|---|
    | Hollowpine 2P | Tent | $289 |
    | Emberline stove | Stove | $64 |
    | Fernlight jacket | Shell jacket | $149 |
    | Trailbox | Rental | $18 per day |

    Prices include sales tax. Sale prices are set twice a year and shown on the web store's front page.
    """)

HOLLOWPINE = _page("""
    # Hollowpine 2P tent

    The Hollowpine 2P is our two-person backpacking tent: one door, two vestibules, and a fly that pitches
    first in the rain.

    The Hollowpine 2P tent costs $289.

    ## Specs

    - Packed weight: 1.9 kg
    - Floor: 210 x 130 cm
    - Poles: aluminium, colour-coded at the ends
    - Fly: 3,000 mm hydrostatic head

    ## Selling tips

    Pitch it in the shop. Customers who see it pitched buy it; customers who see the bag do not. Offer the
    matching footprint ($39) with every tent, and show how the fly clips on before the inner.
    """)

EMBERLINE = _page("""
    # Emberline stove

    A one-burner gas stove that folds to the size of a fist and boils a litre of water in about four minutes.

    The Emberline stove costs $64. Gas canisters are sold separately ($7 each) and cannot be shipped by post:
    click and collect only.

    Known issue: the piezo igniter on the first batch (serial numbers starting EL20) fails in the cold. Swap
    it at the repair bench, free of charge, and log the serial number.
    """)

FERNLIGHT = _page("""
    # Fernlight jacket

    Our lightweight waterproof shell, in a regular and a relaxed fit. The Fernlight jacket costs $149 and
    comes with a lifetime repair promise: bring it to any repair bench and we fix it for free.

    | Size | Chest, regular fit | Chest, relaxed fit |
    |---|---|---|
    | S | 92 cm | 98 cm |
    | M | 100 cm | 106 cm |
    | L | 108 cm | 114 cm |
    | XL | 116 cm | 122 cm |

    Wash it cold, without softener, and tumble dry on low to bring the water beading back.
    """)

TRAILBOX = _page("""
    # Trailbox rental

    Trailbox is our rental program: a crate with a two-person tent, an Emberline stove and two sleeping mats,
    ready to take away for a weekend or a week.

    The Trailbox rental program is owned by the Stores team.

    - Renting a Trailbox costs $18 per day.
    - A deposit of $100 is held on the customer's card and released when the crate comes back complete.
    - Trailboxes returned more than 2 days late are charged for each extra day.

    ## How to hand one over

    1. Check the crate against the packing list taped inside the lid.
    2. Take the deposit on the card terminal.
    3. Write the return date on the crate tag and on the receipt.
    4. Show the customer how the tent pitches, if they have not rented before.
    """)

WEB_TEAM = _page("""
    # Web team

    The Web team builds and runs the web store.

    - **Lead:** Marisol Quenby
    - **Chat channel:** #team-web

    ## What we own

    - The web store front end
    - The Checkout service: basket, payment and order confirmation
    - Product photography and the image pipeline

    ## How to reach us

    Post in #team-web. For an outage, page the on-call engineer from the Checkout service runbook.
    """)

PLATFORM_TEAM = _page("""
    # Platform team

    The Platform team is led by Tobiah Wrenfield. We look after the servers, the network in the shops, the
    shop tills and Stockpot, our inventory tool.

    ## On call

    One of us is on call every week, Monday 9:00 to Monday 9:00. The rota is pinned in #platform.

    ## Asking for help

    Open a ticket in the Platform queue. Tell us what you expected, what happened instead, and the shop or
    page where it happened.
    """)

CUSTOMER_CARE_TEAM = _page("""
    # Customer Care team

    Led by Odessa Marchetti. Customer Care answers every call, email and chat from customers, and keeps the
    refund policy and the support standards up to date.

    ## Rota

    | Day | Morning | Afternoon |
    |---|---|---|
    | Monday to Friday | two advisors | two advisors |
    | Saturday | one advisor | one advisor |
    | Sunday | closed | closed |

    ## Handy pages

    - [Refund policy](../policies/refunds.md)
    - [Support standards](../policies/support.md)
    """)

STORES_TEAM = _page("""
    # Stores team

    The Stores team runs our three shops. The team is led by Ilse Fairbrook; each shop also has a manager.

    | Shop | Manager | Opening hours |
    |---|---|---|
    | Penlow Crossing | Bertil Amankwah | 9:00-18:00 |
    | Alder Quay | Saoirse Lindqvist | 10:00-18:00 |
    | Sedgebury | Yusuf Penhaligon | 9:30-17:30 |

    Shop managers meet on the first Tuesday of every month. Ideas for the shops go in #shops.
    """)

STOCKPOT = _page("""
    # Stockpot

    Stockpot is our inventory tool: it knows how many of every product sit in each shop and in the warehouse.
    Stockpot is owned by the Platform team.

    ## How to do a stock count

    1. Open the inventory app on a shop tablet and choose **Count**.
    2. Scan every item on one shelf, then press **Shelf done**.
    3. Repeat for every shelf; the app shows which shelves are left.
    4. Press **Submit**. A difference of more than 5 units goes to the shop manager for a recount.

    ## Troubleshooting

    - **The scanner beeps twice:** the barcode is not in Stockpot yet. Add it from the product page.
    - **Numbers look wrong the morning after a sale:** the app syncs at 02:00; wait for the next sync.
    - **The tablet is stuck on the logo:** hold the power button for ten seconds.
    """)

CHECKOUT = _page("""
    # Checkout service

    The Checkout service takes a basket from the web store, charges the card and hands the order to the
    warehouse.

    The Checkout service is owned by the Web team.

    ## On call

    - Alerts go to #checkout-alerts.
    - The on-call engineer acknowledges an alert within 15 minutes.
    - If payments fail for more than 10 minutes, switch the web store to "browse only".

    ## Runbook

    1. Check the payment provider's status page.
    2. Restart the checkout workers from the deploy dashboard.
    3. If that does not help, call the team lead.
    """)

PROCESS_RETURN = _page("""
    # How to process a return

    Follow these steps at the till when a customer brings something back.

    1. Ask for the receipt or the order number and check the purchase date against the refund policy.
    2. Inspect the item. Unused or faulty: carry on. Worn and not faulty: offer an exchange instead.
    3. Scan the item and choose **Return** on the till.
    4. Record the item in Stockpot as "returned, to inspect".
    5. Refund to the original payment method. Never refund a card payment in cash.
    6. Put the item in the returns crate with the receipt copy taped to it.
    """)

OPEN_SHOP = _page("""
    # How to open a shop in the morning

    1. Disarm the alarm. Your manager gives you the code; never write it down.
    2. Switch on the tills and wait for the green light on each.
    3. Count the float: $150 in each till, in small notes and coins.
    4. Pitch the display tent if it was packed away for cleaning.
    5. Unlock the front door at opening time, not before.
    6. Post "open" in #shops with the shop's name.
    """)

PENLOW_OFFICE = _page("""
    # Penlow Crossing office

    The office is above the Penlow Crossing shop, at 12 Mill Lane. Thistlecombe Outfitters has used the
    upstairs rooms since 2017.

    - Wi-Fi: the "thistle-staff" network; the password is on the board by the kettle.
    - Parking: four spaces behind the shop, first come, first served.
    - Kitchen: wash your own mugs; the dishwasher runs at 16:00.
    - Post: collected at 15:00 on weekdays.
    - Fire assembly point: the car park of the church opposite.
    """)

TRAVEL = _page("""
    # Travel

    Book work trips through the shared travel inbox at least two weeks ahead.

    - Trains in standard class. Fly only when the train takes more than six hours.
    - Hotels up to $140 a night.
    - Meals: a daily allowance of $55, no receipts needed.
    - Your own car: 52 cents a mile, claimed monthly.

    Trips to the two workshops that make our range are planned by the founder's office each spring.
    """)

HOLIDAYS = _page("""
    # Holidays and closures

    Thistlecombe Outfitters shops close on these days. The office follows the same calendar.

    | Date | What closes |
    |---|---|
    | 1 January | all shops and the office |
    | Spring bank holiday | the office; shops open 10:00-16:00 |
    | First Friday of summer | shops close at 15:00 |
    | 25 and 26 December | all shops and the office |

    Everyone gets 25 days of paid holiday a year plus public holidays. Book them on the rota at least four
    weeks ahead; in December, at least eight.
    """)

STAFF_PERKS = _page("""
    # Staff perks

    Everyone who works at Thistlecombe Outfitters, full or part time, gets these from their first day.

    - Staff get a 40% discount on gear, up to $1,500 of purchases a year.
    - Two paid volunteer days a year, for a trail clean-up or anything else outdoors.
    - A free Trailbox weekend every season.
    - Bench day lessons: learn to repair what you sell.

    ## Questions

    Q: Can I use the staff discount to buy gear for friends?
    A: No. The discount is for your own gear and your household's only.

    Q: Does the discount stack with sale prices?
    A: Yes, it applies on top of the sale price.

    Q: Who do I ask about perks?
    A: Your shop manager, or the Stores team lead if you work somewhere without one.
    """)


# ----- pages added later -----

SHIPPING_REVIEW = _page("""
    # Shipping review, 27 April 2021

    Attendees: Corentin Ashdown, Marisol Quenby, Odessa Marchetti, Ilse Fairbrook

    ## Notes

    - Basket sizes are down since the winter, and courier costs are up 8%.
    - Marisol proposed lowering the free-shipping threshold to $60 to lift conversion. Draft only: not
      approved, to come back after the summer with numbers.
    - Odessa: customers keep asking about Saturday express delivery. No decision.
    - Ilse: click-and-collect orders sometimes arrive a day late at Sedgebury.

    ## Actions

    - [ ] Marisol to model a $60 threshold on last year's orders.
    - [ ] Ilse to count late click-and-collect orders for a month.
    """)

COMMERCE_TEAM = _page("""
    # Commerce team

    The Commerce team was formed in November 2021 to own everything between "add to basket" and "order
    shipped".

    The Commerce team is led by Dashiell Oyelaran.

    We own:

    - the Checkout service
    - promotions and discount codes
    - the order feed to the warehouse

    Ask us in #commerce. Outages still page the on-call engineer from the Checkout service runbook.
    """)

BUDGETS_2022 = _page("""
    # Team budgets

    _Finance only: do not copy these figures into public pages._

    Each team's budget for the year, as approved in January 2022. The figures hold until the next budget is
    approved.

    | Team | Budget for the year |
    |---|---|
    | Marketing | $340,000 |
    | Customer Care | $210,000 |
    | Commerce | $385,000 |
    | Stores (excluding rent) | $1,120,000 |

    Budgets are set in January and reviewed in July. An overspend of more than 5% needs the founder's sign-off.
    """)

SALARY_BANDS_2022 = _page("""
    # Salary bands

    _Staff only._ Bands are reviewed every April. Everyone is paid within the band of their role; where you sit
    in it depends on experience, not on negotiation.

    | Role | Band (yearly, full time) |
    |---|---|
    | Store Associate | $34,000 to $39,000 |
    | Store Lead | $48,000 to $56,000 |
    | Repair Technician | $38,000 to $45,000 |
    | Customer Care Advisor | $33,000 to $38,000 |
    """)

REVIEW_CALENDAR = _page("""
    # Performance review calendar

    _Staff only._

    1. First two weeks of March: write your self-review.
    2. Second half of March: your manager writes theirs and you meet.
    3. April: the salary bands are reviewed and any change is paid from May.
    4. October: a lighter check-in, no forms.
    """)

RETAIL_SYSTEMS_TEAM = _page("""
    # Retail Systems team

    Retail Systems looks after the software our shops run on: the tills, the label printers and Larder, our
    inventory tool.

    - Lead: Runa Halvorsen
    - Formed: July 2022, from part of the Platform team
    - Chat channel: #retail-systems

    If a till or a tablet misbehaves in a shop, call us before you restart anything.
    """)

TENT_NAMING = _page("""
    # Tent naming and pricing, 21 February 2023

    Present: Corentin Ashdown, Dashiell Oyelaran, Ilse Fairbrook

    - The Hollowpine name clashes with a brand sold abroad; from March the tent is called the Cinderfell 2P.
    - Price: Dashiell floated $339 as a draft. Not approved: Corentin asked for a smaller rise. The final price
      goes on the product page when it is agreed.
    - Ilse: the shops need new labels two weeks before the switch.

    Next meeting: after the spring sale.
    """)

MEMBERSHIP_REVIEW = _page("""
    # Trail Circle review, 13 August 2024

    Present: Fenna Brightwater, Wilhelmina Thorncastle, Corentin Ashdown

    - Sign-ups are up since the discount rose in the spring.
    - Draft: a 20% member discount for people who have been members for more than three years. Not approved;
      finance to cost it first.
    - The yearly fee is not changing.
    - Wilhelmina: members ask for workshop places to be bookable online. Fenna to look at it.
    """)

SEDGEBURY_OFFICE = _page("""
    # Sedgebury office

    Since November 2024 the office is in the old granary behind the Sedgebury shop, at 3 Tanyard Row.

    - Wi-Fi: the "thistle-staff" network, same password as before.
    - Parking: the shop car park; leave the front row for customers.
    - Kitchen: shared with the shop; the dishwasher runs at 17:00.
    - Bike storage: the covered rack by the side door.
    """)


# ----- the history -----

HISTORY: tuple[Commit, ...] = (
    Commit("C01", "2021-03-08T10:00:00", "Start the handbook", (
        Write("handbook/index.md", INDEX),
        Write("handbook/about/company.md", COMPANY_PAGE),
        Write("handbook/about/values.md", VALUES),
        Write("handbook/about/glossary.md", GLOSSARY),
        Write("handbook/policies/refunds.md", REFUNDS),
        Write("handbook/policies/shipping.md", SHIPPING),
        Write("handbook/policies/membership.md", MEMBERSHIP),
        Write("handbook/policies/support.md", SUPPORT),
        Write("handbook/faq.md", FAQ),
        Write("handbook/products/catalog.md", CATALOG),
        Write("handbook/products/hollowpine-2p.md", HOLLOWPINE),
        Write("handbook/products/emberline-stove.md", EMBERLINE),
        Write("handbook/products/fernlight-jacket.md", FERNLIGHT),
        Write("handbook/products/trailbox-rental.md", TRAILBOX),
        Write("handbook/teams/web.md", WEB_TEAM),
        Write("handbook/teams/platform.md", PLATFORM_TEAM),
        Write("handbook/teams/customer-care.md", CUSTOMER_CARE_TEAM),
        Write("handbook/teams/stores.md", STORES_TEAM),
        Write("handbook/tools/stockpot.md", STOCKPOT),
        Write("handbook/tools/checkout-service.md", CHECKOUT),
        Write("handbook/howto/process-a-return.md", PROCESS_RETURN),
        Write("handbook/howto/open-a-shop.md", OPEN_SHOP),
        Write("handbook/office/penlow-office.md", PENLOW_OFFICE),
        Write("handbook/office/travel.md", TRAVEL),
        Write("handbook/office/holidays.md", HOLIDAYS),
        Write("handbook/benefits/staff-perks.md", STAFF_PERKS),
    )),
    Commit("C02", "2021-04-28T16:20:00", "Add the notes from the shipping review", (
        Write("handbook/meetings/2021-04-27-shipping-review.md", SHIPPING_REVIEW),
    )),
    Commit("C03", "2021-09-14T09:05:00", "Refund window: 30 days becomes 45", (
        Replace("handbook/policies/refunds.md", "Last reviewed March 2021.", "Last reviewed September 2021."),
        Replace("handbook/policies/refunds.md", "within 30 days of purchase", "within 45 days of purchase"),
        # The FAQ is not touched: it keeps quoting 30 days until C11.
    )),
    Commit("C04", "2021-11-02T11:30:00", "The Checkout service moves to the new Commerce team", (
        Write("handbook/teams/commerce.md", COMMERCE_TEAM),
        Replace("handbook/tools/checkout-service.md", "owned by the Web team.", "owned by the Commerce team."),
        Replace("handbook/teams/web.md", "- The Checkout service: basket, payment and order confirmation\n", ""),
        Replace("handbook/teams/web.md", "Post in #team-web. For an outage, page the on-call engineer from the "
                "Checkout service runbook.",
                "Post in #team-web. The Checkout service moved to the Commerce team in November 2021; ask them "
                "in #commerce."),
    )),
    Commit("C05", "2022-02-15T14:00:00", "Add the team budgets, the salary bands and the review calendar", (
        Write("handbook/finance/budgets.md", BUDGETS_2022),
        Write("handbook/people/salary-bands.md", SALARY_BANDS_2022),
        Write("handbook/people/review-calendar.md", REVIEW_CALENDAR),
    )),
    Commit("C06", "2022-05-10T08:45:00", "Retire the staff gear discount; Trailbox rentals go to $22 a day", (
        Replace("handbook/benefits/staff-perks.md",
                "- Staff get a 40% discount on gear, up to $1,500 of purchases a year.\n", ""),
        Replace("handbook/benefits/staff-perks.md",
                "Q: Can I use the staff discount to buy gear for friends?\n"
                "A: No. The discount is for your own gear and your household's only.\n\n"
                "Q: Does the discount stack with sale prices?\n"
                "A: Yes, it applies on top of the sale price.\n",
                "Q: What happened to the staff discount?\n"
                "A: It was retired in May 2022 while we rework pay for shop staff. This page will say so if it "
                "comes back.\n"),
        Replace("handbook/products/trailbox-rental.md", "costs $18 per day", "costs $22 per day"),
        Replace("handbook/products/catalog.md", "| $18 per day |", "| $22 per day |"),
    )),
    Commit("C07", "2022-07-20T13:10:00", "Stockpot is now Larder, owned by the new Retail Systems team", (
        Move("handbook/tools/stockpot.md", "handbook/tools/larder.md"),
        Replace("handbook/tools/larder.md", "# Stockpot\n", "# Larder\n"),
        Replace("handbook/tools/larder.md",
                "Stockpot is our inventory tool: it knows how many of every product sit in each shop and in the "
                "warehouse.\nStockpot is owned by the Platform team.",
                "Larder, formerly called Stockpot, is our inventory tool: it knows how many of every product sit "
                "in each shop\nand in the warehouse. Larder is owned by the Retail Systems team."),
        Replace("handbook/tools/larder.md", "not in Stockpot yet", "not in Larder yet"),
        Write("handbook/teams/retail-systems.md", RETAIL_SYSTEMS_TEAM),
        Replace("handbook/teams/platform.md",
                "We look after the servers, the network in the shops, the\nshop tills and Stockpot, our inventory "
                "tool.",
                "We look after the servers, the network in the shops and\nthe deploy pipeline. The shop tills and "
                "Larder (formerly Stockpot) moved to the Retail Systems team in July 2022."),
        Replace("handbook/about/glossary.md",
                "- **Stockpot**: the inventory tool. If a stock number is wrong anywhere, Stockpot is where it came "
                "from.\n", ""),
        Replace("handbook/about/glossary.md",
                "- **Open box**",
                "- **Larder**: the inventory tool, called Stockpot until July 2022. If a stock number is wrong "
                "anywhere, Larder is\n  where it came from.\n- **Open box**"),
        # howto/process-a-return.md still says "Record the item in Stockpot": a stale mention, never fixed.
    )),
    Commit("C08", "2022-10-03T10:15:00", "Move the FAQ under support/", (
        Move("handbook/faq.md", "handbook/support/faq.md"),
        Replace("handbook/index.md", "[FAQ](faq.md)", "[FAQ](support/faq.md)"),
    )),
    Commit("C09", "2023-01-16T09:00:00", "Thistlecombe Outfitters is now Thistlecombe Trail Company", (
        Replace("handbook/index.md", "# Welcome to the Thistlecombe Outfitters handbook",
                "# Welcome to the Thistlecombe Trail Company handbook"),
        Replace("handbook/index.md", "Thistlecombe Outfitters sells tents",
                "Thistlecombe Trail Company sells tents"),
        Replace("handbook/index.md", "Thistlecombe Outfitters is led by Corentin Ashdown, who founded the company "
                "in 2014.",
                "Thistlecombe Trail Company is led by Corentin Ashdown, who founded the company in 2014 as\n"
                "Thistlecombe Outfitters."),
        Write("handbook/about/company.md", _page("""
            # About Thistlecombe Trail Company

            Thistlecombe Trail Company, formerly called Thistlecombe Outfitters, started in 2014 as a single shop
            on Mill Lane in Penlow Crossing, renting canvas tents to school groups. Today we run three shops
            (Penlow Crossing, Alder Quay and Sedgebury) and a web store that ships across the country. We took
            the new name in January 2023: we sell fewer outfits and more trails.

            ## What we sell

            Mostly our own range: tents, stoves and shells designed in Penlow Crossing and made by two workshops we
            have worked with since the start. We also resell boots, maps and food from brands we trust.

            ## Who runs what

            Corentin Ashdown, our founder, leads the company. The day-to-day work is split between six teams:
            Stores, Web, Commerce, Platform, Retail Systems and Customer Care. Each has a page under `teams/`.
            """)),
        # The office, holiday and staff perks pages keep the old name: stale mentions.
    )),
    Commit("C10", "2023-03-06T15:40:00", "The Hollowpine 2P is now the Cinderfell 2P, at $319", (
        Write("handbook/meetings/2023-02-21-tent-naming.md", TENT_NAMING),
        Move("handbook/products/hollowpine-2p.md", "handbook/products/cinderfell-2p.md"),
        Replace("handbook/products/cinderfell-2p.md", "# Hollowpine 2P tent\n", "# Cinderfell 2P tent\n"),
        Replace("handbook/products/cinderfell-2p.md",
                "The Hollowpine 2P is our two-person backpacking tent: one door, two vestibules, and a fly that "
                "pitches\nfirst in the rain.",
                "The Cinderfell 2P, formerly called the Hollowpine 2P, is our two-person backpacking tent: one "
                "door,\ntwo vestibules, and a fly that pitches first in the rain."),
        Replace("handbook/products/cinderfell-2p.md", "The Hollowpine 2P tent costs $289.",
                "The Cinderfell 2P tent costs $319."),
        Replace("handbook/products/catalog.md", "| Hollowpine 2P | Tent | $289 |", "| Cinderfell 2P | Tent | $319 |"),
    )),
    Commit("C11", "2023-04-11T12:00:00", "Free shipping from $99; the FAQ catches up", (
        Replace("handbook/policies/shipping.md", "over $75", "over $99", count=2),
        Replace("handbook/support/faq.md", "within 30 days of purchase", "within 45 days of purchase"),
        Replace("handbook/support/faq.md", "on orders over $75", "on orders over $99"),
    )),
    Commit("C12", "2023-08-22T10:30:00", "Customer Care: a new lead, and replies within 24 hours", (
        Replace("handbook/teams/customer-care.md", "Led by Odessa Marchetti.", "Led by Wilhelmina Thorncastle."),
        Replace("handbook/teams/customer-care.md", "## Rota\n",
                "Odessa Marchetti, who led the team from 2016, now manages the Alder Quay shop.\n\n## Rota\n"),
        Replace("handbook/policies/support.md", "within 48 hours", "within 24 hours"),
        Replace("handbook/teams/stores.md", "| Alder Quay | Saoirse Lindqvist |", "| Alder Quay | Odessa Marchetti |"),
    )),
    Commit("C13", "2023-10-09T09:20:00", "Retire Trailbox rentals; Fenna Brightwater leads Commerce", (
        Delete("handbook/products/trailbox-rental.md"),
        Replace("handbook/products/catalog.md", "| Trailbox | Rental | $22 per day |\n", ""),
        Replace("handbook/teams/commerce.md", "The Commerce team is led by Dashiell Oyelaran.",
                "The Commerce team is led by Fenna Brightwater, who took over from Dashiell Oyelaran in October "
                "2023."),
        # The glossary, the FAQ and the staff perks still mention Trailbox: stale mentions.
    )),
    Commit("C14", "2024-02-05T11:00:00", "The staff discount is back; the 2024 budgets", (
        Write("handbook/benefits/staff-perks.md", _page("""
            # Staff perks

            Everyone who works at Thistlecombe Trail Company, full or part time, gets these from their first day.

            - Staff get a 40% discount on gear again, up to $1,500 of purchases a year.
            - Two paid volunteer days a year, for a trail clean-up or anything else outdoors.
            - Bench day lessons: learn to repair what you sell.

            ## Questions

            Q: Is the staff discount back for good?
            A: Yes. It came back in February 2024 on the same terms as before it was retired.

            Q: Can I use the staff discount to buy gear for friends?
            A: No. The discount is for your own gear and your household's only.

            Q: Who do I ask about perks?
            A: Your shop manager, or the Stores team lead if you work somewhere without one.
            """)),
        Write("handbook/finance/budgets.md", _page("""
            # Team budgets

            _Finance only: do not copy these figures into public pages._

            Each team's budget for the year, as approved in January 2024. The figures hold until the next budget
            is approved; 2023 kept the 2022 figures.

            | Team | Budget for the year |
            |---|---|
            | Marketing | $410,000 |
            | Customer Care | $240,000 |
            | Commerce | $402,000 |
            | Stores (excluding rent) | $1,090,000 |

            Budgets are set in January and reviewed in July. An overspend of more than 5% needs the founder's
            sign-off.
            """)),
    )),
    Commit("C15", "2024-04-30T16:00:00", "Trail Circle members get 15%; the Emberline stove goes to $69; 2024 bands", (
        Replace("handbook/policies/membership.md", "members get 10% off", "members get 15% off"),
        Replace("handbook/products/emberline-stove.md", "The Emberline stove costs $64.",
                "The Emberline stove costs $69."),
        # The catalog keeps the stove at $64: a stale price.
        Replace("handbook/people/salary-bands.md", "| Store Lead | $48,000 to $56,000 |",
                "| Store Lead | $52,000 to $61,000 |"),
    )),
    Commit("C16", "2024-09-17T09:45:00", "Refund window to 60 days; notes from the Trail Circle review", (
        Replace("handbook/policies/refunds.md", "Last reviewed September 2021.", "Last reviewed September 2024."),
        Replace("handbook/policies/refunds.md", "within 45 days of purchase", "within 60 days of purchase"),
        Write("handbook/meetings/2024-08-13-membership-review.md", MEMBERSHIP_REVIEW),
        # The FAQ keeps saying 45 days: stale again.
    )),
    Commit("C17", "2024-11-12T14:30:00", "The office moves to Sedgebury; holidays for 2025", (
        Delete("handbook/office/penlow-office.md"),
        Write("handbook/office/sedgebury-office.md", SEDGEBURY_OFFICE),
        Replace("handbook/office/holidays.md", "| 25 and 26 December | all shops and the office |\n",
                "| 24 December | shops close at 14:00 |\n| 25 and 26 December | all shops and the office |\n"),
    )),
)


# ----- the world file -----

WORLD_TEMPLATE = """\
# Thistlecombe Trail Company (Thistlecombe Outfitters until January 2023): a made-up outdoor-gear retailer's
# handbook, written commit by commit into ./repo by driftlab_dagster_tests/support/handbook.py.
# Every company, person, product and place name in it is invented.
id: thistlecombe_handbook
company: {company}

corpus:
  git: repo
  paths: {paths}
  checkpoints: [{checkpoints}]

questions: handbook_questions.yaml

predicates:
  price:
    description: what a product, a rental or a membership costs in US dollars; the subject is the thing sold,
      the object the amount as a number (not the price of an accessory or a fee mentioned beside it)
    subject: name
    object: number
    cues: [costs, cost, price, per day, a year]
    examples:
      - sentence: "The Vornik 3 daypack costs $89."
        subject: Vornik 3 daypack
        object: "89"
      - sentence: "A day pass to the Gallowmere climbing wall costs $12."
        subject: Gallowmere day pass
        object: "12"
  free_shipping_over:
    description: the order value in US dollars above which delivery is free; the subject is Free shipping,
      the object the amount as a number (a proposal in meeting notes is not the policy)
    subject: name
    object: number
    cues: [ship free, free shipping, orders over, threshold]
    examples:
      - sentence: "Orders over $40 ship free from the Quorran web shop."
        subject: Free shipping
        object: "40"
  refund_days:
    description: within how many days of purchase a customer can get a refund; the subject is Refund policy,
      the object the number of days (not restocking fees, exchanges or late returns)
    subject: name
    object: number
    cues: [refund, within, days of purchase, money back]
    examples:
      - sentence: "Buyers at Ostrevane can ask for their money back within 21 days of purchase."
        subject: Refund policy
        object: "21"
  discount_percent:
    description: the percentage off full price that a group of people gets; the subject is the membership or
      Staff gear discount, the object the percentage as a number
    subject: name
    object: number
    cues: [discount, "off", "%"]
    examples:
      - sentence: "Holders of a Brindlecap card get 12% off full-price items."
        subject: Brindlecap card
        object: "12"
      - sentence: "Employees of Tovermill get a 25% discount on anything in the shop."
        subject: Staff gear discount
        object: "25"
  response_hours:
    description: within how many hours customer support replies to an email; the subject is Customer support,
      the object the number of hours
    subject: name
    object: number
    cues: [replies, reply, within, hours]
    examples:
      - sentence: "The Pellidore help desk answers every message within 36 hours."
        subject: Customer support
        object: "36"
  owned_by:
    description: which team owns a product, service, tool or program; the subject is the thing owned, the
      object the team name without the word team
    subject: name
    object: name
    cues: [owned, owns, owner, own, moved to]
    examples:
      - sentence: "The Quvex service is owned by the Zorbrin team."
        subject: Quvex service
        object: Zorbrin
      - sentence: "Marrowfen, our scheduling tool, moved to the Ashgrove Data team this spring."
        subject: Marrowfen
        object: Ashgrove Data
  led_by:
    description: who leads a team or the company; the subject is the team (without the word team) or the
      company, the object the person's full name
    subject: name
    object: person
    cues: [led by, leads, lead, took over]
    examples:
      - sentence: "The Tamsworth team is led by Oriel Quastmoor."
        subject: Tamsworth
        object: Oriel Quastmoor
      - sentence: "Pasco Dunharrow took over the Gorsemere team last year."
        subject: Gorsemere
        object: Pasco Dunharrow
  formerly_called:
    description: the name a company, product or tool had before it was renamed; the subject is the current
      name, the object the old name
    subject: name
    object: name
    cues: [formerly, called, renamed, until, new name]
    examples:
      - sentence: "Wendlecast, formerly called Ombrith, is our billing tool."
        subject: Wendlecast
        object: Ombrith
  budget:
    description: a team's budget for the year in US dollars; the subject is the team (without the word team),
      the object the amount as written
    subject: name
    object: number
    cues: [budget, for the year]
    examples:
      - sentence: "The Sallowby team's budget for the year is $95,000."
        subject: Sallowby
        object: "95,000"
  pay_band:
    description: the salary band of a role, yearly and full time; the subject is the role, the object the
      band as written, from the lowest to the highest amount
    subject: name
    object: phrase
    cues: [band, salary, pay]
    examples:
      - sentence: "Pay for a Kestrin Analyst runs from $41,000 to $47,000."
        subject: Kestrin Analyst
        object: "$41,000 to $47,000"

# Policies, product and team pages over other pages (the FAQ, the how-tos) over meeting notes.
authority:
  "handbook/policies/**": 1
  "handbook/products/**": 1
  "handbook/teams/**": 1
  "handbook/tools/**": 1
  "handbook/faq.md": 2
  "handbook/support/**": 2
  "handbook/meetings/**": 3

audience:
{audience}

naming:
  drop_prefixes: ["the "]
  drop_suffixes: [" team", " tent", " stove", " jacket", " rental program", " membership"]
"""


def world_yaml() -> str:
    """The world file's text (the checkpoints, the paths and the audiences from this module)."""
    return WORLD_TEMPLATE.format(
        company=COMPANY,
        paths="[" + ", ".join(f'"{p}"' for p in PATHS) + "]",
        checkpoints=", ".join(d.isoformat() for d in CHECKPOINTS),
        audience="\n".join(f'  "{glob}": {who}' for glob, who in AUDIENCE.items()),
    )


# ----- building -----

@dataclass(frozen=True)
class HandbookRepo:
    root: Path
    repo: Path                      # the git repository (work tree at the last commit)
    world: Path                     # root/handbook.yaml
    questions: Path                 # root/handbook_questions.yaml
    checkpoints: tuple[dt.date, ...]
    commits: tuple[str, ...]        # commit ids, oldest first, one per HISTORY entry


def _git_env() -> dict[str, str]:
    """The environment for every git call: no user or system configuration, no inherited GIT_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0",
               LC_ALL="C", TZ="UTC")
    return env


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run git in `repo` and return its stdout; a failure raises with git's own message."""
    result = subprocess.run(["git", *args], cwd=repo, env=env or _git_env(), capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _apply(repo: Path, change) -> None:
    if isinstance(change, Write):
        target = repo / change.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(change.text.encode("utf-8"))
    elif isinstance(change, Replace):
        target = repo / change.path
        text = target.read_text(encoding="utf-8")
        found = text.count(change.old)
        if found != change.count:
            raise ValueError(f"{change.path}: expected {change.count} of {change.old[:60]!r}, found {found}")
        target.write_bytes(text.replace(change.old, change.new).encode("utf-8"))
    elif isinstance(change, Move):
        (repo / change.dst).parent.mkdir(parents=True, exist_ok=True)
        git(repo, "mv", change.src, change.dst)
    elif isinstance(change, Delete):
        git(repo, "rm", "-q", change.path)
    else:  # pragma: no cover - a programming error in HISTORY
        raise TypeError(f"unknown change {change!r}")


def build_handbook(root: Path) -> HandbookRepo:
    """Write the handbook repository at root/repo, the world file and the questions file; return their paths."""
    root = Path(root)
    repo = root / "repo"
    if repo.exists():
        raise FileExistsError(f"{repo} already exists")
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", AUTHOR_NAME), ("user.email", AUTHOR_EMAIL), ("commit.gpgsign", "false"),
                       ("core.autocrlf", "false"), ("core.fileMode", "false")):
        git(repo, "config", key, value)
    commits = []
    for commit in HISTORY:
        for change in commit.changes:
            _apply(repo, change)
        git(repo, "add", "-A", "handbook")
        stamp = f"{commit.when} +0000"
        env = {**_git_env(), "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        git(repo, "commit", "-q", "--no-verify", "-m", commit.message, env=env)
        commits.append(git(repo, "rev-parse", "HEAD").strip())
    world = root / "handbook.yaml"
    world.write_text(world_yaml(), encoding="utf-8")
    questions = root / "handbook_questions.yaml"
    shutil.copyfile(QUESTIONS_SOURCE, questions)
    return HandbookRepo(root=root, repo=repo, world=world, questions=questions, checkpoints=CHECKPOINTS,
                        commits=tuple(commits))


if __name__ == "__main__":  # build one into a folder to look at: python -m driftlab_dagster_tests.support.handbook DIR
    import sys

    built = build_handbook(Path(sys.argv[1]))
    print(built.repo, built.commits[-1])
