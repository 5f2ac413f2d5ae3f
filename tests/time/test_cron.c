/* Cron schedules and time zones (src/cron*.c, src/time/tzfile.c) against data taken from Go.
 *
 * Every expected fire time and error text in the tables below was produced ONCE by the
 * Go oracle (tests/oracle/run cron: robfig/cron v3.0.1 on Go 1.19's
 * time package, Debian tzdata 2025b), by feeding it "SPEC<TAB>UNIX<TAB>3" lines, and
 * pasted here as data; the time.Date values come from a small Go program run the same
 * way. Cases with a local zone run in child processes (this binary re-executed with TZ
 * set), because the local zone is read once per process. test_cron_oracle runs the
 * same comparison live on thousands of random specs. */
#include "testlib.h"

#include "cron_impl.h"
#include "tzfile.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct cron_case {
    const char *spec;
    int64_t now;
    int64_t want[3]; /* three successive fire times; 0: none within five years */
} cron_case;

/* clang-format off */
static const cron_case cases[] = {
    {"TZ=UTC 0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}}, /* 18.4 calc */
    {"TZ=UTC */20 * * * * *", 1700000000, {1700000020, 1700000040, 1700000060}}, /* 18.4 tick */
    {"TZ=UTC */5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}}, /* 18.4 five */
    {"TZ=UTC @hourly", 1700002700, {1700002800, 1700006400, 1700010000}}, /* 18.4 hourly */
    {"TZ=UTC 3/49 * * * * *", 1468359453, {1468359472, 1468359483, 1468359532}}, /* fork test bar */
    {"TZ=UTC 0/29 * * * * *", 1468359453, {1468359478, 1468359480, 1468359509}}, /* fork test foo */
    {"TZ=America/New_York 0 30 2 * * *", 1710046800, {1710138600, 1710225000, 1710311400}}, /* NY spring */
    {"TZ=America/New_York 0 30 2 * * *", 1730608200, {1730619000, 1730705400, 1730791800}}, /* NY fall */
    {"TZ=America/New_York 0 0 2 * * *", 1710046800, {1710136800, 1710223200, 1710309600}}, /* NY spring */
    {"TZ=America/New_York 0 0 2 * * *", 1730608200, {1730617200, 1730703600, 1730790000}}, /* NY fall */
    {"TZ=America/New_York 0 30 1 * * *", 1710046800, {1710052200, 1710135000, 1710221400}}, /* NY spring */
    {"TZ=America/New_York 0 30 1 * * *", 1730608200, {1730611800, 1730615400, 1730701800}}, /* NY fall */
    {"TZ=America/New_York 0 0 * * * *", 1710046800, {1710050400, 1710054000, 1710057600}}, /* NY spring */
    {"TZ=America/New_York 0 0 * * * *", 1730608200, {1730610000, 1730613600, 1730617200}}, /* NY fall */
    {"TZ=America/New_York 0 */30 * * * *", 1710046800, {1710048600, 1710050400, 1710052200}}, /* NY spring */
    {"TZ=America/New_York 0 */30 * * * *", 1730608200, {1730610000, 1730611800, 1730613600}}, /* NY fall */
    {"TZ=America/New_York 0 0 0 * * *", 1710046800, {1710129600, 1710216000, 1710302400}}, /* NY spring */
    {"TZ=America/New_York 0 0 0 * * *", 1730608200, {1730696400, 1730782800, 1730869200}}, /* NY fall */
    {"TZ=America/New_York 0 59 1 * * *", 1710046800, {1710053940, 1710136740, 1710223140}}, /* NY spring */
    {"TZ=America/New_York 0 59 1 * * *", 1730608200, {1730613540, 1730617140, 1730703540}}, /* NY fall */
    {"TZ=America/New_York 0 0 3 * * *", 1710046800, {1710054000, 1710140400, 1710226800}}, /* NY spring */
    {"TZ=America/New_York 0 0 3 * * *", 1730608200, {1730620800, 1730707200, 1730793600}}, /* NY fall */
    {"CRON_TZ=America/New_York 0 30 1 3 11 *", 1730612700, {1730615400, 1762151400, 1793687400}}, /* NY second 01:30 */
    {"TZ=Europe/Berlin 0 30 2 * * *", 1711839600, {1711931400, 1712017800, 1712104200}}, /* Berlin spring */
    {"TZ=Europe/Berlin 0 30 2 * * *", 1729985400, {1729989000, 1729992600, 1730079000}}, /* Berlin fall */
    {"TZ=Europe/Berlin 0 0 2 * * *", 1711839600, {1711929600, 1712016000, 1712102400}}, /* Berlin spring */
    {"TZ=Europe/Berlin 0 0 2 * * *", 1729985400, {1729987200, 1729990800, 1730077200}}, /* Berlin fall */
    {"TZ=Europe/Berlin 0 0 * * * *", 1711839600, {1711843200, 1711846800, 1711850400}}, /* Berlin spring */
    {"TZ=Europe/Berlin 0 0 * * * *", 1729985400, {1729987200, 1729990800, 1729994400}}, /* Berlin fall */
    {"TZ=Europe/Berlin 0 15 2 * * *", 1711839600, {1711930500, 1712016900, 1712103300}}, /* Berlin spring */
    {"TZ=Europe/Berlin 0 15 2 * * *", 1729985400, {1729988100, 1729991700, 1730078100}}, /* Berlin fall */
    {"TZ=Europe/Berlin 0 0 3 * * *", 1711839600, {1711846800, 1711933200, 1712019600}}, /* Berlin spring */
    {"TZ=Europe/Berlin 0 0 3 * * *", 1729985400, {1729994400, 1730080800, 1730167200}}, /* Berlin fall */
    {"TZ=Europe/Berlin @daily", 1711839600, {1711922400, 1712008800, 1712095200}}, /* Berlin spring */
    {"TZ=Europe/Berlin @daily", 1729985400, {1730070000, 1730156400, 1730242800}}, /* Berlin fall */
    {"TZ=Australia/Lord_Howe 0 45 1 * * *", 1712408400, {1712414700, 1712416500, 1712502900}}, /* Lord Howe fall */
    {"TZ=Australia/Lord_Howe 0 45 1 * * *", 1728133200, {1728141300, 1728143100, 1728225900}}, /* Lord Howe spring */
    {"TZ=Australia/Lord_Howe 0 15 2 * * *", 1712408400, {1712504700, 1712591100, 1712677500}}, /* Lord Howe fall */
    {"TZ=Australia/Lord_Howe 0 15 2 * * *", 1728133200, {1728227700, 1728314100, 1728400500}}, /* Lord Howe spring */
    {"TZ=Australia/Lord_Howe 0 0 2 * * *", 1712408400, {1712503800, 1712590200, 1712676600}}, /* Lord Howe fall */
    {"TZ=Australia/Lord_Howe 0 0 2 * * *", 1728133200, {1728226800, 1728313200, 1728399600}}, /* Lord Howe spring */
    {"TZ=Australia/Lord_Howe 0 */15 * * * *", 1712408400, {1712409300, 1712410200, 1712411100}}, /* Lord Howe fall */
    {"TZ=Australia/Lord_Howe 0 */15 * * * *", 1728133200, {1728134100, 1728135000, 1728135900}}, /* Lord Howe spring */
    {"TZ=Australia/Lord_Howe 0 0 * * * *", 1712408400, {1712412000, 1712417400, 1712421000}}, /* Lord Howe fall */
    {"TZ=Australia/Lord_Howe 0 0 * * * *", 1728133200, {1728135000, 1728138600, 1728144000}}, /* Lord Howe spring */
    {"TZ=Australia/Lord_Howe 0 30 1 * * *", 1712408400, {1712413800, 1712415600, 1712502000}}, /* Lord Howe fall */
    {"TZ=Australia/Lord_Howe 0 30 1 * * *", 1728133200, {1728140400, 1728142200, 1728225000}}, /* Lord Howe spring */
    {"TZ=America/Sao_Paulo 0 0 0 * * *", 1541160000, {1541214000, 1541383200, 1541469600}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 0 0 * * *", 1550232000, {1550282400, 1550372400, 1550458800}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo @daily", 1541160000, {1541214000, 1541383200, 1541469600}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo @daily", 1550232000, {1550282400, 1550372400, 1550458800}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo 0 30 0 * * *", 1541160000, {1541215800, 1541385000, 1541471400}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 30 0 * * *", 1550232000, {1550284200, 1550374200, 1550460600}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo 0 0 0 4 11 *", 1541160000, {1572836400, 1604458800, 1635994800}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 0 0 4 11 *", 1550232000, {1572836400, 1604458800, 1635994800}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo 0 0 1 * * *", 1541160000, {1541217600, 1541300400, 1541386800}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 0 1 * * *", 1550232000, {1550286000, 1550376000, 1550462400}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo 0 0 0 5 11 *", 1541160000, {1541383200, 1572922800, 1604545200}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 0 0 5 11 *", 1550232000, {1572922800, 1604545200, 1636081200}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo 0 0 23 * * *", 1541160000, {1541210400, 1541296800, 1541379600}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 0 23 * * *", 1550232000, {1550278800, 1550365200, 1550368800}}, /* Sao Paulo midnight overlap */
    {"TZ=America/Sao_Paulo 0 0 0 * * 0", 1541160000, {1541901600, 1542506400, 1543111200}}, /* Sao Paulo midnight gap */
    {"TZ=America/Sao_Paulo 0 0 0 * * 0", 1550232000, {1550372400, 1550977200, 1551582000}}, /* Sao Paulo midnight overlap */
    {"TZ=Asia/Beirut 0 0 0 * * *", 1711800000, {1711918800, 1712005200, 1712091600}}, /* Beirut midnight gap */
    {"TZ=Asia/Beirut 0 0 0 * * *", 1729944000, {1729980000, 1730066400, 1730152800}}, /* Beirut midnight overlap */
    {"TZ=Asia/Beirut 0 30 0 * * *", 1711800000, {1711920600, 1712007000, 1712093400}}, /* Beirut midnight gap */
    {"TZ=Asia/Beirut 0 30 0 * * *", 1729944000, {1729981800, 1730068200, 1730154600}}, /* Beirut midnight overlap */
    {"TZ=Asia/Beirut 0 0 23 * * *", 1711800000, {1711832400, 1711915200, 1712001600}}, /* Beirut midnight gap */
    {"TZ=Asia/Beirut 0 0 23 * * *", 1729944000, {1729972800, 1729976400, 1730062800}}, /* Beirut midnight overlap */
    {"TZ=Asia/Beirut 0 0 * * * *", 1711800000, {1711803600, 1711807200, 1711810800}}, /* Beirut midnight gap */
    {"TZ=Asia/Beirut 0 0 * * * *", 1729944000, {1729947600, 1729951200, 1729954800}}, /* Beirut midnight overlap */
    {"TZ=America/Havana 0 0 0 * * *", 1709899200, {1709960400, 1710129600, 1710216000}}, /* Havana */
    {"TZ=America/Havana 0 0 0 10 3 *", 1709294400, {1741579200, 1773115200, 1804654800}}, /* Havana day of the gap */
    {"TZ=Africa/Monrovia 0 0 * * * *", 44582400, {44588670, 44592270, 44595870}}, /* Monrovia seconds offset */
    {"TZ=Africa/Monrovia 0 */7 * * * *", 44582400, {44583150, 44583570, 44583990}}, /* Monrovia minutes */
    {"TZ=Africa/Monrovia 0 0 0 * * *", 63547200, {63763200, 63849600, 63936000}}, /* Monrovia change */
    {"TZ=Europe/Dublin 0 30 1 * * *", 1729944000, {1729989000, 1729992600, 1730079000}}, /* Dublin */
    {"TZ=Pacific/Chatham 0 0 * * * *", 1712408400, {1712409300, 1712412900, 1712416500}}, /* Chatham */
    {"TZ=Antarctica/Troll 0 30 1 * * *", 1711800000, {1711927800, 1712014200, 1712100600}}, /* Troll 2h DST */
    {"TZ=America/New_York 0 30 2 * * *", 2214968400, {2214977400, 2215146600, 2215233000}}, /* NY footer spring */
    {"TZ=Europe/Berlin 0 30 2 * * *", 2550697200, {2550702600, 2550706200, 2550792600}}, /* Berlin footer fall */
    {"TZ=Australia/Lord_Howe 0 15 2 * * *", 2390389200, {2390483700, 2390570100, 2390656500}}, /* Lord Howe footer */
    {"TZ=UTC 0 0 0 29 2 *", 1672531200, {1709164800, 1835395200, 1961625600}}, /* 29 Feb */
    {"TZ=UTC 0 0 12 29 2 *", 1709208000, {1835438400, 1961668800, 2087899200}}, /* 29 Feb after */
    {"TZ=UTC 0 0 0 29 2 *", 3957724800, {3981312000, 0, 0}}, /* 29 Feb across 2100 */
    {"TZ=UTC 0 0 0 29 2 *", 4007836800, {0, 0, 0}}, /* 29 Feb: five-year limit */
    {"TZ=UTC 0 0 0 29 2 4", 1672531200, {1675296000, 1675900800, 1676505600}}, /* 29 Feb or Thursdays in Feb */
    {"TZ=UTC 0 0 0 29 2 */1", 1672531200, {1709164800, 1835395200, 1961625600}}, /* a dow step of 1 is a star: AND rule */
    {"TZ=UTC 0 0 0 1 * 1", 1705276800, {1705881600, 1706486400, 1706745600}}, /* dom/dow */
    {"TZ=UTC 0 0 0 1 * *", 1705276800, {1706745600, 1709251200, 1711929600}}, /* dom/dow */
    {"TZ=UTC 0 0 0 1 * */1", 1705276800, {1706745600, 1709251200, 1711929600}}, /* dom/dow */
    {"TZ=UTC 0 0 0 1 * */2", 1705276800, {1705363200, 1705536000, 1705708800}}, /* dom/dow */
    {"TZ=UTC 0 0 0 */1 * 1", 1705276800, {1705881600, 1706486400, 1707091200}}, /* dom/dow */
    {"TZ=UTC 0 0 0 ? * mon", 1705276800, {1705881600, 1706486400, 1707091200}}, /* dom/dow */
    {"TZ=UTC 0 0 0 13 * fri", 1705276800, {1705622400, 1706227200, 1706832000}}, /* dom/dow */
    {"TZ=UTC 0 0 0 13 * ?", 1705276800, {1707782400, 1710288000, 1712966400}}, /* dom/dow */
    {"TZ=UTC 0 0 0 */2 * 0", 1705276800, {1705449600, 1705622400, 1705795200}}, /* dom/dow */
    {"TZ=UTC 0 0 0 1-7 * 0", 1705276800, {1705795200, 1706400000, 1706745600}}, /* dom/dow */
    {"TZ=UTC 0 0 0 31 * *", 1705276800, {1706659200, 1711843200, 1717113600}}, /* dom/dow */
    {"TZ=UTC @yearly", 1715953512, {1735689600, 1767225600, 1798761600}}, /* descriptor */
    {"TZ=UTC @annually", 1715953512, {1735689600, 1767225600, 1798761600}}, /* descriptor */
    {"TZ=UTC @monthly", 1715953512, {1717200000, 1719792000, 1722470400}}, /* descriptor */
    {"TZ=UTC @weekly", 1715953512, {1716076800, 1716681600, 1717286400}}, /* descriptor */
    {"TZ=UTC @daily", 1715953512, {1715990400, 1716076800, 1716163200}}, /* descriptor */
    {"TZ=UTC @midnight", 1715953512, {1715990400, 1716076800, 1716163200}}, /* descriptor */
    {"TZ=UTC @hourly", 1715953512, {1715954400, 1715958000, 1715961600}}, /* descriptor */
    {"TZ=UTC @every 1h30m", 1715953512, {1715958912, 1715964312, 1715969712}}, /* descriptor */
    {"TZ=UTC @every 1.5s", 1715953512, {1715953513, 1715953514, 1715953515}}, /* descriptor */
    {"TZ=UTC @every 300ms", 1715953512, {1715953513, 1715953514, 1715953515}}, /* descriptor */
    {"TZ=UTC @every 90s", 1715953512, {1715953602, 1715953692, 1715953782}}, /* descriptor */
    {"TZ=UTC @every -5s", 1715953512, {1715953513, 1715953514, 1715953515}}, /* descriptor */
    {"TZ=UTC @every 0", 1715953512, {1715953513, 1715953514, 1715953515}}, /* descriptor */
    {"TZ=UTC @every .5m", 1715953512, {1715953542, 1715953572, 1715953602}}, /* descriptor */
    {"TZ=UTC @every 1h0m0.9s", 1715953512, {1715957112, 1715960712, 1715964312}}, /* descriptor */
    {"TZ=UTC 0 0 9 * JAN-mar MON-fri", 1715953512, {1735722000, 1735808400, 1735894800}}, /* syntax */
    {"TZ=UTC 0 0 9 * Feb sun", 1715953512, {1738486800, 1739091600, 1739696400}}, /* syntax */
    {"TZ=UTC 0 0 12 1 jan,Jul *", 1715953512, {1719835200, 1735732800, 1751371200}}, /* syntax */
    {"TZ=UTC 0 +5 * * * *", 1715953512, {1715954700, 1715958300, 1715961900}}, /* syntax */
    {"TZ=UTC 05 05 05 * * *", 1715953512, {1716008705, 1716095105, 1716181505}}, /* syntax */
    {"TZ=UTC 0 1,,2 * * * *", 1715953512, {1715954460, 1715954520, 1715958060}}, /* syntax */
    {"TZ=UTC 0 ,5, * * * *", 1715953512, {1715954700, 1715958300, 1715961900}}, /* syntax */
    {"TZ=UTC 0 */7 * * * *", 1715953512, {1715953740, 1715954160, 1715954400}}, /* syntax */
    {"TZ=UTC 0 5-10/2 * * * *", 1715953512, {1715954700, 1715954820, 1715954940}}, /* syntax */
    {"TZ=UTC 0 50/3 * * * *", 1715953512, {1715953800, 1715953980, 1715954160}}, /* syntax */
    {"TZ=UTC 0 0 */5 * * *", 1715953512, {1715958000, 1715976000, 1715990400}}, /* syntax */
    {"TZ=UTC 0 0 0 5/10 * *", 1715953512, {1716595200, 1717545600, 1718409600}}, /* syntax */
    {"TZ=UTC 0 0 0 * 2/5 *", 1715953512, {1719792000, 1719878400, 1719964800}}, /* syntax */
    {"TZ=UTC * * * * * *", 1715953512, {1715953513, 1715953514, 1715953515}}, /* syntax */
    {"TZ=UTC 0 0-59/15 0-23/6 * * *", 1715953512, {1715968800, 1715969700, 1715970600}}, /* syntax */
    {"TZ=UTC 0 *-5 * * * *", 1715953512, {1715953560, 1715953620, 1715953680}}, /* syntax */
    {"TZ=UTC 0 0 12 * * 6/2", 1715953512, {1716033600, 1716638400, 1717243200}}, /* syntax */
    {"TZ=UTC 0 0 0 1 dec/3 *", 1715953512, {1733011200, 1764547200, 1796083200}}, /* syntax */
    {"TZ=UTC 0 0 0 25 12 *", 1735084800, {1766620800, 1798156800, 1829692800}}, /* strictly after t */
    {"TZ=UTC 59 59 23 31 12 *", 1735689598, {1735689599, 1767225599, 1798761599}}, /* last second of the year */
    {"TZ=Asia/Kolkata 0 0 0 1 1 *", 1735669800, {1767205800, 1798741800, 1830277800}}, /* Kolkata new year */
    {"TZ= 0 0 * * * *", 1715953512, {1715954400, 1715958000, 1715961600}}, /* TZ= is UTC */
    {"TZ=UTC   0 0 * * * *", 1715953512, {1715954400, 1715958000, 1715961600}}, /* spaces after TZ= */
    {"TZ=Etc/GMT+5 0 0 0 * * *", 1715953512, {1716008400, 1716094800, 1716181200}}, /* Etc/GMT+5 is UTC-5 */
    {"TZ=EST5EDT 0 30 2 * * *", 1710046800, {1710138600, 1710225000, 1710311400}}, /* EST5EDT */
    {"TZ=UTC 0 0 0 1 1 *", -100000000, {-94694400, -63158400, -31536000}}, /* before 1970 */
    {"TZ=Europe/Amsterdam 0 0 0 * * *", -1025784000, {-1025659200, -1025572800, -1025486400}}, /* Amsterdam +00:19:32 (1937) */
};

typedef struct error_case {
    const char *spec;
    const char *message;
} error_case;

static const error_case errors[] = {
    {"TZ=UTC 0 0 0 L * *", "failed to parse int from L: strconv.Atoi: parsing \"L\": invalid syntax"},
    {"x", "expected 5 to 6 fields, found 1: [x]"},
    {"* * * *", "expected 5 to 6 fields, found 4: [* * * *]"},
    {"* * * * * * *", "expected 5 to 6 fields, found 7: [* * * * * * *]"},
    {"0 60 * * * *", "end of range (60) above maximum (59): 60"},
    {"0 0 24 * * *", "end of range (24) above maximum (23): 24"},
    {"0 0 0 0 * *", "beginning of range (0) below minimum (1): 0"},
    {"0 0 0 32 * *", "end of range (32) above maximum (31): 32"},
    {"0 0 0 * 13 *", "end of range (13) above maximum (12): 13"},
    {"0 0 0 * * 7", "end of range (7) above maximum (6): 7"},
    {"0 5-3 * * * *", "beginning of range (5) beyond end of range (3): 5-3"},
    {"0 1-2-3 * * * *", "too many hyphens: 1-2-3"},
    {"0 1/2/3 * * * *", "too many slashes: 1/2/3"},
    {"0 */0 * * * *", "step of range should be a positive number: */0"},
    {"0 */-1 * * * *", "negative number (-1) not allowed: -1"},
    {"0 a * * * *", "failed to parse int from a: strconv.Atoi: parsing \"a\": invalid syntax"},
    {"0 99999999999999999999 * * * *", "failed to parse int from 99999999999999999999: strconv.Atoi: parsing \"99999999999999999999\": value out of range"},
    {"0 0 0 * jam *", "failed to parse int from jam: strconv.Atoi: parsing \"jam\": invalid syntax"},
    {"@often", "unrecognized descriptor: @often"},
    {"@Hourly", "unrecognized descriptor: @Hourly"},
    {"@every", "unrecognized descriptor: @every"},
    {"@every x", "failed to parse duration @every x: time: invalid duration \"x\""},
    {"@every 5", "failed to parse duration @every 5: time: missing unit in duration \"5\""},
    {"@every 1d", "failed to parse duration @every 1d: time: unknown unit \"d\" in duration \"1d\""},
    {"@every 1..5s", "failed to parse duration @every 1..5s: time: missing unit in duration \"1..5s\""},
    {"@every 2562048h", "failed to parse duration @every 2562048h: time: invalid duration \"2562048h\""},
    {"TZ=Nowhere/Zone 0 0 * * * *", "provided bad location Nowhere/Zone: unknown time zone Nowhere/Zone"},
    {"TZ=Europe 0 0 * * * *", "provided bad location Europe: is a directory"},
    {"TZ=../etc 0 0 * * * *", "provided bad location ../etc: time: invalid location name"},
    {"TZ=/etc/localtime 0 0 * * * *", "provided bad location /etc/localtime: time: invalid location name"},
    {"TZ=zone.tab 0 0 * * * *", "provided bad location zone.tab: malformed time zone information"},
    {"TZ=America/New_York/x 0 0 * * * *", "provided bad location America/New_York/x: not a directory"},
    {"CRON_TZ=europe/berlin @daily", "provided bad location europe/berlin: unknown time zone europe/berlin"},
    {"TZ=UTC ", "expected 5 to 6 fields, found 0: []"},
    {" @hourly", "expected 5 to 6 fields, found 1: [@hourly]"},
    {"@hourly ", "unrecognized descriptor: @hourly "},
    {"0 - * * * *", "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax"},
    {"0 +-1 * * * *", "failed to parse int from +: strconv.Atoi: parsing \"+\": invalid syntax"},
    {"0 5- * * * *", "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax"},
    {"0 0 0 * * MON-SUN/2", "beginning of range (1) beyond end of range (0): MON-SUN/2"},
    {"0 \xc3\xa9" "5 * * * *", "failed to parse int from \xc3\xa9" "5: strconv.Atoi: parsing \"\xc3\xa9" "5\": invalid syntax"},
};

typedef struct local_case {
    const char *tz; /* the TZ environment variable */
    const char *spec;
    int64_t now;
    int64_t want[3];
} local_case;

static const local_case local_cases[] = {
    {"America/New_York", "0 30 2 * * *", 1710043200, {1710138600, 1710225000, 1710311400}},
    {"America/New_York", "0 0 0 * * *", 1541160000, {1541217600, 1541304000, 1541394000}},
    {"America/New_York", "@daily", 1729944000, {1730001600, 1730088000, 1730174400}},
    {"America/New_York", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {"America/New_York", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {"America/New_York", "TZ=Local 0 0 12 * * *", 1700000000, {1700067600, 1700154000, 1700240400}},
    {"America/New_York", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"America/New_York", "0 0 1 * * *", 1711846800, {1711861200, 1711947600, 1712034000}},
    {":Europe/Berlin", "0 30 2 * * *", 1710043200, {1710120600, 1710207000, 1710293400}},
    {":Europe/Berlin", "0 0 0 * * *", 1541160000, {1541199600, 1541286000, 1541372400}},
    {":Europe/Berlin", "@daily", 1729944000, {1729980000, 1730070000, 1730156400}},
    {":Europe/Berlin", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {":Europe/Berlin", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {":Europe/Berlin", "TZ=Local 0 0 12 * * *", 1700000000, {1700046000, 1700132400, 1700218800}},
    {":Europe/Berlin", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {":Europe/Berlin", "0 0 1 * * *", 1711846800, {1711926000, 1712012400, 1712098800}},
    {"", "0 30 2 * * *", 1710043200, {1710124200, 1710210600, 1710297000}},
    {"", "0 0 0 * * *", 1541160000, {1541203200, 1541289600, 1541376000}},
    {"", "@daily", 1729944000, {1729987200, 1730073600, 1730160000}},
    {"", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {"", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {"", "TZ=Local 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"", "0 0 1 * * *", 1711846800, {1711933200, 1712019600, 1712106000}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "0 30 2 * * *", 1710043200, {1710091800, 1710178200, 1710264600}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "0 0 0 * * *", 1541160000, {1541170800, 1541257200, 1541343600}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "@daily", 1729944000, {1729954800, 1730041200, 1730127600}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "TZ=Local 0 0 12 * * *", 1700000000, {1700017200, 1700103600, 1700190000}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"/usr/share/zoneinfo/Asia/Tokyo", "0 0 1 * * *", 1711846800, {1711900800, 1711987200, 1712073600}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "0 30 2 * * *", 1710043200, {1710084600, 1710171000, 1710257400}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "0 0 0 * * *", 1541160000, {1541163600, 1541250000, 1541336400}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "@daily", 1729944000, {1729947600, 1730034000, 1730120400}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "TZ=Local 0 0 12 * * *", 1700000000, {1700010000, 1700096400, 1700182800}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {":/usr/share/zoneinfo/Australia/Lord_Howe", "0 0 1 * * *", 1711846800, {1711893600, 1711980000, 1712066400}},
    {"Bogus/Zone", "0 30 2 * * *", 1710043200, {1710124200, 1710210600, 1710297000}},
    {"Bogus/Zone", "0 0 0 * * *", 1541160000, {1541203200, 1541289600, 1541376000}},
    {"Bogus/Zone", "@daily", 1729944000, {1729987200, 1730073600, 1730160000}},
    {"Bogus/Zone", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {"Bogus/Zone", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {"Bogus/Zone", "TZ=Local 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"Bogus/Zone", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"Bogus/Zone", "0 0 1 * * *", 1711846800, {1711933200, 1712019600, 1712106000}},
    {"UTC", "0 30 2 * * *", 1710043200, {1710124200, 1710210600, 1710297000}},
    {"UTC", "0 0 0 * * *", 1541160000, {1541203200, 1541289600, 1541376000}},
    {"UTC", "@daily", 1729944000, {1729987200, 1730073600, 1730160000}},
    {"UTC", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {"UTC", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {"UTC", "TZ=Local 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"UTC", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"UTC", "0 0 1 * * *", 1711846800, {1711933200, 1712019600, 1712106000}},
    {"America/Sao_Paulo", "0 30 2 * * *", 1710043200, {1710048600, 1710135000, 1710221400}},
    {"America/Sao_Paulo", "0 0 0 * * *", 1541160000, {1541214000, 1541383200, 1541469600}},
    {"America/Sao_Paulo", "@daily", 1729944000, {1729998000, 1730084400, 1730170800}},
    {"America/Sao_Paulo", "0 * * * * *", 1700000000, {1700000040, 1700000100, 1700000160}},
    {"America/Sao_Paulo", "*/5 * * * *", 1700000000, {1700000100, 1700000400, 1700000700}},
    {"America/Sao_Paulo", "TZ=Local 0 0 12 * * *", 1700000000, {1700060400, 1700146800, 1700233200}},
    {"America/Sao_Paulo", "TZ=UTC 0 0 12 * * *", 1700000000, {1700049600, 1700136000, 1700222400}},
    {"America/Sao_Paulo", "0 0 1 * * *", 1711846800, {1711857600, 1711944000, 1712030400}},
};
/* clang-format on */

static void check_chain(const char *what, const char *spec, int64_t now, const int64_t want[3])
{
    cw_cron *c = NULL;
    cwork_error err = {0};
    if (cw_cron_parse(spec, &c, &err) != 0) {
        tl_fail(__FILE__, __LINE__, "%s \"%s\": %s", what, spec, err.message);
        return;
    }
    int64_t t = now;
    int none = 0;
    for (int i = 0; i < 3; i++) {
        int64_t got = none ? 0 : cw_cron_next(c, t);
        none = got == 0;
        if (got != want[i]) {
            tl_fail(__FILE__, __LINE__, "%s \"%s\" from %lld: fire %d is %lld, want %lld", what,
                    spec, (long long)now, i + 1, (long long)got, (long long)want[i]);
            break;
        }
        t = got;
    }
    cw_cron_free(c);
}

static void table_agrees_with_go(void)
{
    CHECK(sizeof cases / sizeof cases[0] >= 100);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_chain("spec", cases[i].spec, cases[i].now, cases[i].want);
}

static void errors_read_like_robfig(void)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        cw_cron *c = NULL;
        cwork_error err = {0};
        int rc = cw_cron_parse(errors[i].spec, &c, &err);
        CHECK_INT(rc, CWORK_EINVAL);
        CHECK_STR(err.message, errors[i].message);
        CHECK(c == NULL);
        cw_cron_free(c);
    }
    cwork_error err = {0};
    cw_cron *c = NULL;
    CHECK_INT(cw_cron_parse("", &c, &err), CWORK_EINVAL);
    CHECK_STR(err.message, "empty spec string");
    /* Go's robfig panics on a TZ= prefix without a space; cwork refuses it. */
    CHECK_INT(cw_cron_parse("TZ=UTC", &c, &err), CWORK_EINVAL);
    CHECK(strstr(err.message, "provided bad location UTC") != NULL);
    CHECK_INT(cw_cron_parse(NULL, &c, &err), CWORK_EINVAL);
}

static int refused(const char *spec)
{
    cw_cron *c = NULL;
    cwork_error err = {0};
    int rc = cw_cron_parse(spec, &c, &err);
    cw_cron_free(c);
    if (rc == 0) return 0;
    if (!strstr(err.message, "never fires"))
        tl_fail(__FILE__, __LINE__, "\"%s\": unexpected error %s", spec, err.message);
    return 1;
}

/* PROTOCOL §16.12: a spec Go accepts but whose Next is always the zero time. */
static void never_firing_specs_are_refused(void)
{
    CHECK(refused("0 0 0 30 2 *"));
    CHECK(refused("0 0 0 31 2 ?"));
    CHECK(refused("0 0 0 30-31 feb *"));
    CHECK(refused("0 0 0 31 4 *"));
    CHECK(refused("0 0 0 31 4,6,9,11 *"));
    CHECK(refused("0 0 0 31 apr */1")); /* a dow step of 1 counts as a star: both must match */
    CHECK(refused("TZ=Europe/Berlin 0 0 0 30 2 *"));
    CHECK(refused("0 , * * * *")); /* an empty list matches nothing */
    CHECK(refused(", * * * * *"));
    CHECK(refused("0 0 ,, * * *"));
    CHECK(refused("0 0 0 * , *"));
    CHECK(refused("0 0 0 , * ,"));
    /* These fire: 29 February every four years, or the OR rule of dom and dow. */
    CHECK(!refused("0 0 0 29 2 *"));
    CHECK(!refused("0 0 0 29 feb ?"));
    CHECK(!refused("0 0 0 31 4 1"));
    CHECK(!refused("0 0 0 31 4 */2"));
    CHECK(!refused("0 0 0 30 2 mon"));
    CHECK(!refused("0 0 0 , * 1")); /* no day of month, but Mondays (OR rule) */
    CHECK(!refused("@every 1s"));
}

static void sunday_to_monday_and_other_valid_oddities(void)
{
    static const cron_case more[] = {
        /* from the oracle as well */
        {"TZ=UTC 0 0 0 * * sun-mon", 0, {259200, 345600, 864000}},
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        check_chain("spec", more[i].spec, more[i].now, more[i].want);
}

static void every_schedules(void)
{
    cw_cron *c = NULL;
    CHECK_INT(cw_cron_parse("@every 1h30m", &c, NULL), 0);
    CHECK(cw_cron_is_every(c));
    CHECK_INT(cw_cron_next(c, 1000), 1000 + 5400);
    CHECK_INT(cw_cron_next(c, INT64_MAX - 10), 0); /* no overflow */
    cw_cron_free(c);
    CHECK_INT(cw_cron_parse("TZ=Asia/Tokyo @every 300ms", &c, NULL), 0);
    CHECK_INT(cw_cron_next(c, 7), 8); /* at least a second */
    cw_cron_free(c);
    CHECK_INT(cw_cron_parse("0 * * * * *", &c, NULL), 0);
    CHECK(!cw_cron_is_every(c));
    cw_cron_free(c);
}

/* robfig's day search never ends when it meets the day Samoa skipped (30 December 2011):
 * time.Date(2011, 12, 30, 0, 0, 0) is 29 December 00:00 there, so AddDate(0, 0, 1)
 * stays put forever and a Go process hangs in Next. cwork gives up after a bounded
 * number of steps and answers "none". */
static void next_gives_up_where_go_loops_forever(void)
{
    cw_cron *c = NULL;
    CHECK_INT(cw_cron_parse("TZ=Pacific/Apia 0 0 0 1 * *", &c, NULL), 0);
    long long t0 = tl_now_ms();
    CHECK_INT(cw_cron_next(c, 1324339200 /* 2011-12-20 */), 0);
    CHECK(tl_now_ms() - t0 < 5000);
    CHECK_INT(cw_cron_next(c, 1325376000 /* 2012-01-01 */), 1328004000); /* 2012-02-01 */
    cw_cron_free(c);
}

static void out_of_range_times_have_no_next(void)
{
    cw_cron *c = NULL;
    CHECK_INT(cw_cron_parse("TZ=UTC * * * * * *", &c, NULL), 0);
    CHECK_INT(cw_cron_next(c, INT64_MAX), 0);
    CHECK_INT(cw_cron_next(c, INT64_MIN), 0);
    CHECK_INT(cw_cron_next(c, -1), 0); /* the epoch itself reads as "none" */
    CHECK_INT(cw_cron_next(c, 0), 1);
    cw_cron_free(c);
}

/* ---------------------------------------------------------------- time zones */

static const cw_tz *zone(const char *name)
{
    const cw_tz *z = NULL;
    cwork_error err = {0};
    if (cw_tz_load(name, strlen(name), &z, &err) != 0)
        tl_fail(__FILE__, __LINE__, "load %s: %s", name, err.message);
    return z;
}

/* time.Date's picks in gaps and overlaps (values from Go 1.19, see the file comment). */
static void tz_date_matches_go(void)
{
    static const struct {
        const char *zone;
        int64_t y, mo, d, h, mi, want;
    } dates[] = {
        {"America/New_York", 2024, 3, 10, 2, 30, 1710052200}, /* gap: 01:30 EST */
        {"America/New_York", 2024, 11, 3, 1, 30, 1730611800}, /* overlap: EDT */
        {"Europe/Berlin", 2024, 3, 31, 2, 30, 1711848600},    /* gap: 03:30 CEST */
        {"Europe/Berlin", 2024, 10, 27, 2, 30, 1729992600},   /* overlap: CET */
        {"America/Sao_Paulo", 2018, 11, 4, 0, 0, 1541296800}, /* 23:00 the day before */
        {"Australia/Lord_Howe", 2024, 10, 6, 2, 15, 1728143100},
        {"Australia/Lord_Howe", 2024, 4, 7, 1, 45, 1712416500},
        {"Europe/London", 2024, 3, 31, 1, 30, 1711848600},
        {"Pacific/Apia", 2011, 12, 30, 0, 0, 1325152800},      /* 29 December */
        {"America/New_York", 2024, 2, 30, 25, 61, 1709362860}, /* normalised */
        {"America/New_York", 2024, -1, 0, -1, 0, 1698721200},
    };
    for (size_t i = 0; i < sizeof dates / sizeof dates[0]; i++) {
        const cw_tz *z = zone(dates[i].zone);
        if (!z) continue;
        int64_t got =
            cw_tz_date(z, dates[i].y, dates[i].mo, dates[i].d, dates[i].h, dates[i].mi, 0);
        if (got != dates[i].want)
            tl_fail(__FILE__, __LINE__, "Date in %s #%zu: %lld, want %lld", dates[i].zone, i,
                    (long long)got, (long long)dates[i].want);
        cw_tz_release(z);
    }
}

static void tz_civil_fields(void)
{
    const cw_tz *z = zone("Australia/Lord_Howe");
    cw_civil c;
    cw_tz_civil(z, 1712414700, &c); /* 2024-04-07 01:45 +11, before the fall back */
    CHECK_INT(c.year, 2024);
    CHECK_INT(c.month, 4);
    CHECK_INT(c.day, 7);
    CHECK_INT(c.hour, 1);
    CHECK_INT(c.min, 45);
    CHECK_INT(c.offset, 11 * 3600);
    CHECK_INT(c.wday, 0);
    cw_tz_civil(z, 1712416500, &c); /* 01:45 again, +10:30 */
    CHECK_INT(c.hour, 1);
    CHECK_INT(c.min, 45);
    CHECK_INT(c.offset, 10 * 3600 + 1800);
    cw_tz_release(z);
    z = zone("Africa/Monrovia");
    cw_tz_civil(z, 0, &c); /* 1969-12-31 23:15:30 at -0:44:30 */
    CHECK_INT(c.year, 1969);
    CHECK_INT(c.hour, 23);
    CHECK_INT(c.min, 15);
    CHECK_INT(c.sec, 30);
    CHECK_INT(c.offset, -2670);
    cw_tz_release(z);
    char buf[40];
    cw_tz_format_utc(1700000000, buf);
    CHECK_STR(buf, "2023-11-14T22:13:20Z");
    cw_tz_format_utc(-1, buf);
    CHECK_STR(buf, "1969-12-31T23:59:59Z");
}

static void tz_names_like_go(void)
{
    const cw_tz *z = NULL;
    CHECK_INT(cw_tz_load("", 0, &z, NULL), 0);
    CHECK(z == cw_tz_utc());
    CHECK_INT(cw_tz_load("UTC", 3, &z, NULL), 0);
    CHECK(z == cw_tz_utc());
    CHECK_INT(cw_tz_load("Local", 5, &z, NULL), 0);
    CHECK(z == cw_tz_local() && cw_tz_is_local(z));
    cw_tz_release(z); /* builtins are never freed */
    cwork_error err = {0};
    CHECK_INT(cw_tz_load("a..b", 4, &z, &err), CWORK_EINVAL);
    CHECK_STR(err.message, "time: invalid location name");
    CHECK_INT(cw_tz_load("\\x", 2, &z, &err), CWORK_EINVAL);
    CHECK_STR(err.message, "time: invalid location name");
    CHECK_INT(cw_tz_load("Mars/Olympus", 12, &z, &err), CWORK_EINVAL);
    CHECK_STR(err.message, "unknown time zone Mars/Olympus");
    CHECK_INT(cw_tz_load("Europe/Berlin", 6, &z, &err), CWORK_EINVAL); /* "Europe" */
    CHECK_STR(err.message, "is a directory");
    CHECK_INT(cw_tz_load("Europe/Berlin", 13, &z, NULL), 0);
    CHECK_STR(cw_tz_name(z), "Europe/Berlin");
    cw_tz_release(z);
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* TZif edge cases, with Go's verdicts: version 1 data, a footer ignored when malformed,
 * no zones, an out-of-range index, truncation, an unknown version. */
static void tzif_files(void)
{
    unsigned char f[128];
    memset(f, 0, sizeof f);
    memcpy(f, "TZif", 4);  /* v1: 1 transition at 1000 to type 1; types 0 (+1h) and 1 (+2h) */
    put32(f + 20 + 12, 1); /* timecnt */
    put32(f + 20 + 16, 2); /* typecnt */
    put32(f + 20 + 20, 4); /* charcnt */
    unsigned char *d = f + 44;
    put32(d, 1000);
    d[4] = 1;
    put32(d + 5, 3600), d[9] = 0, d[10] = 0;
    put32(d + 11, 7200), d[15] = 1, d[16] = 0;
    memcpy(d + 17, "ABC", 4);
    size_t len = (size_t)(d + 21 - f);
    const cw_tz *z = NULL;
    CHECK_INT(cw_tz_from_tzif("v1", f, len, &z, NULL), 0);
    if (z) {
        CHECK_INT(cw_tz_lookup(z, 999, NULL, NULL), 3600);
        CHECK_INT(cw_tz_lookup(z, 1000, NULL, NULL), 7200);
        CHECK_INT(cw_tz_lookup(z, INT64_C(5000000000), NULL, NULL), 7200);
        cw_tz_release(z);
    }
    /* a version 1 file followed by "\nUTC0\n": Go reads it as a footer too */
    unsigned char g[160];
    memcpy(g, f, len);
    memcpy(g + len, "\n<X>-5\n", 7);
    CHECK_INT(cw_tz_from_tzif("v1f", g, len + 7, &z, NULL), 0);
    if (z) {
        CHECK_INT(cw_tz_lookup(z, 2000, NULL, NULL), 5 * 3600);
        cw_tz_release(z);
    }
    cwork_error err = {0};
    CHECK_INT(cw_tz_from_tzif("short", f, len - 1, &z, &err), CWORK_EINVAL);
    CHECK_STR(err.message, "malformed time zone information");
    f[4] = '4'; /* Go 1.19 knows versions 1 to 3 only */
    CHECK_INT(cw_tz_from_tzif("v4", f, len, &z, &err), CWORK_EINVAL);
    f[4] = 0;
    d[4] = 2; /* index out of range */
    CHECK_INT(cw_tz_from_tzif("idx", f, len, &z, &err), CWORK_EINVAL);
    d[4] = 1;
    d[10] = 9; /* abbreviation index beyond the abbreviations */
    CHECK_INT(cw_tz_from_tzif("abbr", f, len, &z, &err), CWORK_EINVAL);
    d[10] = 0;
    put32(f + 20 + 16, 0); /* no types */
    CHECK_INT(cw_tz_from_tzif("none", f, len, &z, &err), CWORK_EINVAL);
    CHECK_INT(cw_tz_from_tzif("magic", (const unsigned char *)"TZi", 3, &z, &err), CWORK_EINVAL);
}

/* ---------------------------------------------------------------- the local zone */

static int run_local_cases(const char *tz)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof local_cases / sizeof local_cases[0]; i++) {
        if (strcmp(local_cases[i].tz, tz) != 0) continue;
        tl_case_failed = 0;
        check_chain("local", local_cases[i].spec, local_cases[i].now, local_cases[i].want);
        failed |= tl_case_failed;
    }
    return failed;
}

/* With TZ unset the zone is /etc/localtime, whatever this machine has there. */
static int run_unset_case(void)
{
    FILE *f = fopen("/etc/localtime", "rb");
    unsigned char buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    const cw_tz *want = cw_tz_utc(), *loaded = NULL;
    if (n > 0 && cw_tz_from_tzif("Local", buf, n, &loaded, NULL) == 0) want = loaded;
    cw_cron *c = NULL;
    int failed = cw_cron_parse("0 30 2 * * *", &c, NULL) != 0;
    for (int64_t t = 1700000000; !failed && t < 1700000000 + 400 * 86400; t += 86400 * 7) {
        int64_t got = cw_cron_next(c, t);
        cw_civil civ;
        cw_tz_civil(want, got, &civ);
        if (civ.min != 30 || got <= t || got > t + 2 * 86400) failed = 1;
    }
    cw_cron_free(c);
    cw_tz_release(loaded);
    CHECK(!failed);
    return failed;
}

static char self_path[4096];

static int run_child(const char *tz)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (tz)
            setenv("TZ", tz, 1);
        else
            unsetenv("TZ");
        setenv("CWORK_TEST_CRON_CHILD", tz ? tz : "(unset)", 1);
        execl(self_path, self_path, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void local_zone_from_tz_variable(void)
{
    static const char *const tzs[] = {"America/New_York",
                                      ":Europe/Berlin",
                                      "",
                                      "/usr/share/zoneinfo/Asia/Tokyo",
                                      ":/usr/share/zoneinfo/Australia/Lord_Howe",
                                      "Bogus/Zone",
                                      "UTC",
                                      "America/Sao_Paulo"};
    for (size_t i = 0; i < sizeof tzs / sizeof tzs[0]; i++) {
        int rc = run_child(tzs[i]);
        if (rc != 0) tl_fail(__FILE__, __LINE__, "local zone TZ=\"%s\": child exit %d", tzs[i], rc);
    }
    int rc = run_child(NULL);
    if (rc != 0) tl_fail(__FILE__, __LINE__, "local zone with TZ unset: child exit %d", rc);
}

int main(void)
{
    const char *child = getenv("CWORK_TEST_CRON_CHILD");
    if (child) /* re-executed with a local zone: check the cases for it */
        return strcmp(child, "(unset)") == 0 ? run_unset_case() : run_local_cases(child);
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0) return 1;
    self_path[n] = '\0';
    RUN(table_agrees_with_go);
    RUN(errors_read_like_robfig);
    RUN(never_firing_specs_are_refused);
    RUN(sunday_to_monday_and_other_valid_oddities);
    RUN(every_schedules);
    RUN(next_gives_up_where_go_loops_forever);
    RUN(out_of_range_times_have_no_next);
    RUN(tz_date_matches_go);
    RUN(tz_civil_fields);
    RUN(tz_names_like_go);
    RUN(tzif_files);
    RUN(local_zone_from_tz_variable);
    return tl_finish();
}
